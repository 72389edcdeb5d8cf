"""The user's own ``LightningModule`` of issue 20, shared by the bring-your-own tests.

Its own ``training_step`` (logging ``my_train_loss``), ``configure_optimizers`` (SGD, lr 0.1,
momentum 0.9, a ``StepLR`` halving the rate every ``step_size`` (3) steps, or epochs with
``interval="epoch"``) and
``validation_step`` (logging ``val_my_loss`` and ``my_acc``). A dropout layer makes the
parameters depend on the RNG stream, for the resume test.
"""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
import torch
import torch.nn.functional as F


class OwnModule(pl.LightningModule):
    def __init__(
        self, features: int = 8, classes: int = 3, interval: str = "step", step_size: int = 3
    ) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.interval, self.step_size = interval, step_size
        self.net = torch.nn.Sequential(
            torch.nn.Linear(features, 16),
            torch.nn.ReLU(),
            torch.nn.Dropout(0.2),
            torch.nn.Linear(16, classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        loss = F.cross_entropy(self.net(batch["x"]), batch["y"])
        self.log("my_train_loss", loss * 2)
        return loss

    def validation_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> None:
        logits = self.net(batch["x"])
        self.log_dict(
            {
                "val_my_loss": F.cross_entropy(logits, batch["y"]),
                "my_acc": (logits.argmax(-1) == batch["y"]).float().mean(),
            }
        )

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=self.step_size, gamma=0.5)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": self.interval},
        }


class TupleBatches(OwnModule):
    """The same module written for a ``TensorDataset`` loader's ``(x, y)`` batches."""

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return super().training_step({"x": x, "y": y}, batch_idx)
