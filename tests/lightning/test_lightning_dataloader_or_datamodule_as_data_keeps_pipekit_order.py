"""Issue 20: a ``torch.utils.data.DataLoader`` over a map-style dataset, or a
``LightningDataModule``, is accepted as data. The user module's ``training_step`` gets the
loader's own batches (its ``collate_fn``: here dicts with the row index), in pipekit's order
(epoch ``e`` is ``default_rng([seed, e]).permutation(n)``, so resume stays bit-exact), and a
val loader feeds its ``validation_step``. What pipekit cannot resume — a custom sampler, an
iterable dataset — and a batch_size that contradicts the loop's are refused before fit."""

from __future__ import annotations

from typing import Any

import lightning.pytorch as pl
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from _lightning_helpers import data, loop, mlp

from pipekit_train.errors import ConfigError, DataError


class Rows(torch.utils.data.Dataset):
    def __init__(self, d: dict[str, np.ndarray]) -> None:
        self.d = d

    def __len__(self) -> int:
        return len(self.d["x"])

    def __getitem__(self, i: int) -> dict[str, Any]:
        return {"x": self.d["x"][i], "y": self.d["y"][i], "row": i}


class Seen(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = mlp()
        self.rows: list[list[int]] = []

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        self.rows.append(batch["row"].tolist())
        return F.cross_entropy(self.net(batch["x"]), batch["y"])

    def validation_step(self, batch: dict, batch_idx: int) -> None:
        self.log("val_loss", F.cross_entropy(self.net(batch["x"]), batch["y"]))


def _expected(n: int, batch: int, steps: int, seed: int) -> list[list[int]]:
    per_epoch = n // batch
    out = []
    for s in range(steps):
        e, j = divmod(s, per_epoch)
        out.append(np.random.default_rng([seed, e]).permutation(n)[j * batch : (j + 1) * batch])
    return [r.tolist() for r in out]


def _loader(d: dict[str, np.ndarray], **kwargs: Any) -> torch.utils.data.DataLoader:
    return torch.utils.data.DataLoader(Rows(d), batch_size=16, **kwargs)


def test_dataloader_batches_in_pipekit_order_and_val_loader() -> None:
    d, module = data(), Seen()
    _, info = loop(
        model_op=module,
        loss=None,
        dataset=_loader(d, shuffle=True),
        val_dataset=_loader(data(seed=1)),
        max_steps=8,
        seed=5,
    ).run()
    assert module.rows == _expected(96, 16, 8, seed=5)  # 6 steps per epoch: crosses one
    assert "val_loss" in info["final_metrics"]


def test_datamodule_train_and_val_dataloaders() -> None:
    class Data(pl.LightningDataModule):
        def setup(self, stage: str) -> None:
            self.train, self.val = Rows(data()), Rows(data(seed=1))

        def train_dataloader(self) -> torch.utils.data.DataLoader:
            return torch.utils.data.DataLoader(self.train, batch_size=16, shuffle=True)

        def val_dataloader(self) -> torch.utils.data.DataLoader:
            return torch.utils.data.DataLoader(self.val, batch_size=32)

    module = Seen()
    _, info = loop(model_op=module, loss=None, dataset=Data(), max_steps=3, seed=2).run()
    assert module.rows == _expected(96, 16, 3, seed=2)
    assert "val_loss" in info["final_metrics"]


def test_plain_module_and_loss_on_a_dataloader() -> None:
    d = data()
    ds = torch.utils.data.TensorDataset(torch.from_numpy(d["x"]), torch.from_numpy(d["y"]))
    _, info = loop(dataset=torch.utils.data.DataLoader(ds, batch_size=16), max_steps=3).run()
    assert info["final_step"] == 3


def test_custom_sampler_is_data_error_naming_it(no_fit) -> None:
    d = data()
    sampler = torch.utils.data.WeightedRandomSampler(np.ones(96), 96)
    with pytest.raises(DataError, match=r"custom sampler \(WeightedRandomSampler\).*resume"):
        loop(model_op=Seen(), loss=None, dataset=_loader(d, sampler=sampler)).run()


def test_iterable_dataset_is_data_error(no_fit) -> None:
    class Stream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter([])

    with pytest.raises(DataError, match="iterable-style dataset"):
        loop(model_op=Seen(), loss=None, dataset=torch.utils.data.DataLoader(Stream())).run()


def test_loader_batch_size_contradicting_the_loop_is_config_error(no_fit) -> None:
    with pytest.raises(ConfigError, match=r"batch_size=32 and the batch_size=16") as err:
        loop(model_op=Seen(), loss=None, dataset=_loader(data()), batch_size=32).run()
    assert err.value.field == "batch_size"
