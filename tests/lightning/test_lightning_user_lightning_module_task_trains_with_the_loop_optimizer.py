"""``task=`` a user ``LightningModule`` factory: its ``training_step`` trains, with the loop's
optimiser (``configure_optimizers`` comes from ``optimizer_config``), and evaluation reports
its loss on ``val_dataset``. A ``task`` that is not a ``LightningModule`` is a ``ConfigError``."""

from __future__ import annotations

import lightning.pytorch as pl
import pytest
import torch
import torch.nn.functional as F
from _lightning_helpers import data, loop, mlp

from pipekit_train.errors import ConfigError


class Classifier(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)

    def training_step(self, batch: dict, batch_idx: int) -> torch.Tensor:
        return F.cross_entropy(self.net(batch["x"]), batch["y"])


def test_user_module_trains_and_evaluates() -> None:
    d = data()
    before = Classifier()
    first = F.cross_entropy(before(torch.from_numpy(d["x"])), torch.from_numpy(d["y"]))
    op, info = loop(
        model_op=None,
        loss=None,
        task=Classifier,
        max_steps=30,
        val_dataset=d,
        optimizer_config={"name": "adam", "lr": 1e-2},
    ).run()
    assert isinstance(op.module, Classifier)
    assert info["final_metrics"]["val_loss"] < float(first)
    assert op(d["x"]).shape == (len(d["x"]), 3)


def test_task_that_is_not_a_lightning_module(no_fit) -> None:
    with pytest.raises(ConfigError, match="task must be a lightning.pytorch.LightningModule"):
        loop(model_op=None, loss=None, task=lambda: torch.nn.Linear(2, 2)).run()
