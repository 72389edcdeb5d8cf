"""Issue 20: a loop field that contradicts the user's ``LightningModule`` is a ``ConfigError``
naming both sides, before ``Trainer.fit``: ``loss=`` beside its own ``training_step``, an
explicit ``optimizer_config`` beside its own ``configure_optimizers``. A plain module without
``loss=`` is told that a ``training_step`` (or ``loss=``) is the way."""

from __future__ import annotations

import lightning.pytorch as pl
import pytest
import torch
from _lightning_helpers import loop, mlp
from _own_module import OwnModule

from pipekit_train.errors import ConfigError


@pytest.mark.parametrize("as_field", ["model_op", "task"])
def test_loss_beside_its_own_training_step(no_fit, as_field: str) -> None:
    fields = {"model_op": OwnModule()} if as_field == "model_op" else {"task": OwnModule()}
    with pytest.raises(ConfigError, match=r"own training_step.*loss='cross_entropy'") as err:
        loop(**fields, loss="cross_entropy").run()
    assert err.value.field == "loss" and "drop loss=" in str(err.value)


def test_explicit_optimizer_config_beside_configure_optimizers(no_fit) -> None:
    with pytest.raises(ConfigError, match=r"optimizer_config=.*OwnModule.configure_optimizers"):
        loop(model_op=OwnModule(), loss=None, optimizer_config={"name": "adam", "lr": 3e-3}).run()


class NoSteps(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = mlp()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def test_plain_module_without_loss_names_the_ways() -> None:
    with pytest.raises(ConfigError, match=r"or task= \(a LightningModule with its own"):
        loop(model_op=mlp(), loss=None)


def test_lightning_module_without_training_step_or_loss(no_fit) -> None:
    with pytest.raises(ConfigError, match=r"NoSteps without a training_step.*needs loss="):
        loop(model_op=NoSteps(), loss=None).run()
