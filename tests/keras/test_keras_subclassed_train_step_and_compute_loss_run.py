"""Issue 20: a subclassed model's own ``train_step`` runs inside the loop's ``fit`` (its
extra log ``custom_step`` reaches the writers), whether the user compiled it or the loop
did (``loss=``); an overridden ``compute_loss`` is the loss that trains and is logged."""

from __future__ import annotations

import json
from pathlib import Path

import keras
import pytest
from _keras_helpers import digits

from pipekit_train import TrainingLoop


class OwnStep(keras.Model):
    def __init__(self) -> None:
        super().__init__()
        self.dense = keras.layers.Dense(10)

    def call(self, x):
        return self.dense(x)

    def train_step(self, state, data):
        logs, state = super().train_step(state, data)
        return {**logs, "custom_step": keras.ops.ones(())}, state


class OwnLoss(OwnStep):
    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        base = super().compute_loss(x, y, y_pred, sample_weight, training)
        return base * 0.0 + 7.0


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("compiled_by", ["user", "loop"])
def test_own_train_step_runs(tmp_path: Path, compiled_by: str) -> None:
    keras.utils.set_random_seed(0)
    model = OwnStep()
    fields: dict = {}
    if compiled_by == "user":
        model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(True))
    else:
        fields["loss"] = "cross_entropy"
    path = tmp_path / "m.jsonl"
    TrainingLoop(
        **fields,
        model_op=model,
        dataset=digits(128),
        batch_size=32,
        max_steps=3,
        log_every_n_steps=1,
        metric_writer=f"jsonl:{path}",
        backend="keras",
    ).run()
    assert [r["custom_step"] for r in _rows(path) if "loss" in r] == [1.0, 1.0, 1.0]


def test_own_compute_loss_is_the_loss(tmp_path: Path) -> None:
    keras.utils.set_random_seed(0)
    model = OwnLoss()
    path = tmp_path / "m.jsonl"
    TrainingLoop(
        model_op=model,
        dataset=digits(128),
        loss="cross_entropy",
        batch_size=32,
        max_steps=2,
        log_every_n_steps=1,
        metric_writer=f"jsonl:{path}",
        backend="keras",
    ).run()
    assert [r["loss"] for r in _rows(path) if "loss" in r] == [7.0, 7.0]
