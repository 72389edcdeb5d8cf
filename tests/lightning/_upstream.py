"""Lightning's canonical examples as their users write them, shrunk to scikit-learn's digits.

``LitAutoEncoder`` is the Lightning README's (28 * 28 MNIST pixels become 8 * 8 digits);
``DigitsDataModule`` has the shape of the ``MNISTDataModule`` of Lightning's DataModule docs
(``prepare_data`` / ``setup`` / ``train_dataloader`` / ``val_dataloader``, a
``random_split`` seeded 42), with ``load_digits`` in place of the download; ``LitClassifier``
is the docs' classifier trained on it. Nothing here knows about pipekit.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as L
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split


def digit_images(n: int | None = None) -> TensorDataset:
    """Digits as ``ToTensor()`` gives MNIST: float images ``(1, 8, 8)`` in [0, 1], int labels."""
    d = load_digits()
    x = torch.tensor(d.images / 16.0, dtype=torch.float32).unsqueeze(1)
    y = torch.tensor(d.target, dtype=torch.int64)
    return TensorDataset(x[:n], y[:n])


class LitAutoEncoder(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.encoder = nn.Sequential(nn.Linear(8 * 8, 128), nn.ReLU(), nn.Linear(128, 3))
        self.decoder = nn.Sequential(nn.Linear(3, 128), nn.ReLU(), nn.Linear(128, 8 * 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # in lightning, forward defines the prediction/inference actions
        embedding = self.encoder(x)
        return embedding

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        # training_step defines the train loop. It is independent of forward
        x, _ = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        return optimizer


class DigitsDataModule(L.LightningDataModule):
    def __init__(self, batch_size: int = 32) -> None:
        super().__init__()
        self.batch_size = batch_size

    def prepare_data(self) -> None:
        # download (here: scikit-learn's bundled digits, nothing to fetch)
        load_digits()

    def setup(self, stage: str) -> None:
        full = digit_images()
        self.digits_train, self.digits_val = random_split(
            full, [1500, 297], generator=torch.Generator().manual_seed(42)
        )

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.digits_train, batch_size=self.batch_size)

    def val_dataloader(self) -> DataLoader:
        return DataLoader(self.digits_val, batch_size=self.batch_size)


class LitClassifier(L.LightningModule):
    def __init__(self, lr: float = 1e-3) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lr = lr
        self.model = nn.Sequential(nn.Flatten(), nn.Linear(8 * 8, 64), nn.ReLU(), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        logits = self(x)
        self.log("val_loss", F.cross_entropy(logits, y))
        self.log("val_acc", (logits.argmax(-1) == y).float().mean())

    def configure_optimizers(self) -> Any:
        return torch.optim.Adam(self.parameters(), lr=self.lr)
