"""Issue 20: ``TrainingLoop`` without ``loss=`` or ``task=`` accepts a ``model_op`` that may
say its own loss — duck-typed as a LightningModule (``training_step`` +
``configure_optimizers``) or a Keras model (``train_step`` + ``compile``), bare or inside an
op — and leaves the decision to its backend. Any other model is refused, and the message
names ``task=`` and these ways."""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

DATA = {"x": np.zeros((4, 2), np.float32), "y": np.zeros(4, np.int32)}


class LightningLike:
    def training_step(self, batch, i): ...

    def configure_optimizers(self): ...


class KerasLike:
    def train_step(self, state, data): ...

    def compile(self, **kwargs): ...


class Op:
    def __init__(self, module) -> None:
        self.module = module


@pytest.mark.parametrize("model", [LightningLike(), KerasLike(), Op(LightningLike())])
def test_model_that_may_say_its_loss_stands_without_loss(model) -> None:
    TrainingLoop(model_op=model, dataset=DATA, backend="lightning")


def test_other_model_without_loss_names_task_and_the_ways() -> None:
    with pytest.raises(ConfigError, match=r"or task= \(a LightningModule.*compile\(\)d Keras"):
        TrainingLoop(model_op=object(), dataset=DATA)
