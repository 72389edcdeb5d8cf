"""Issue 20: a model the user ``compile()``d with ``SGD(0.1)``, its own loss and metrics
trains without ``loss=``: ``model.optimizer`` is still that SGD instance afterwards (4
iterations), the logged ``lr`` is 0.1, its ``accuracy`` metric is in the JSONL, and
``val_loss`` is its own loss. The user's Keras callbacks (``backend_options["callbacks"]``)
run beside pipekit's. ``loss=`` or an explicit ``optimizer_config`` beside the compiled
ones is a ``ConfigError`` naming both, before any step."""

from __future__ import annotations

import json
from pathlib import Path

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError


def _compiled() -> keras.Model:
    model = mlp()
    model.compile(
        optimizer=keras.optimizers.SGD(0.1, momentum=0.9),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
    )
    return model


def _loop(model: keras.Model, **overrides) -> TrainingLoop:
    fields = dict(model_op=model, dataset=digits(256), batch_size=32, max_steps=4, backend="keras")
    fields.update(overrides)
    return TrainingLoop(**fields)


class Counter(keras.callbacks.Callback):
    def __init__(self) -> None:
        super().__init__()
        self.batches = 0

    def on_train_batch_end(self, batch, logs=None) -> None:
        self.batches += 1


def test_compiled_sgd_loss_and_metrics_are_kept(tmp_path: Path) -> None:
    model = _compiled()
    sgd = model.optimizer
    counter = Counter()
    path = tmp_path / "m.jsonl"
    _, info = _loop(
        model,
        val_dataset=digits(64, offset=256),
        log_every_n_steps=1,
        metric_writer=f"jsonl:{path}",
        backend_options={"callbacks": [counter]},
    ).run()
    assert model.optimizer is sgd and isinstance(sgd, keras.optimizers.SGD)
    assert int(np.asarray(sgd.iterations.value)) == 4
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    train = [r for r in rows if "loss" in r]
    assert [r["step"] for r in train] == [1, 2, 3, 4]
    assert all(r["lr"] == pytest.approx(0.1) and 0 <= r["accuracy"] <= 1 for r in train)
    assert "val_loss" in info["final_metrics"]
    assert counter.batches == 4


def test_loss_beside_the_compiled_loss_is_config_error() -> None:
    model = _compiled()
    with pytest.raises(ConfigError, match=r"compile\(\)d with loss=.*TrainingLoop.loss=") as e:
        _loop(model, loss="cross_entropy").run()
    assert e.value.field == "loss"
    assert int(np.asarray(model.optimizer.iterations.value)) == 0


def test_explicit_optimizer_config_beside_the_compiled_optimizer_is_config_error() -> None:
    model = _compiled()
    with pytest.raises(ConfigError, match=r"optimizer_config=.*compile\(\)d with \(SGD\)"):
        _loop(model, optimizer_config={"name": "adam", "lr": 1e-2}).run()
    assert isinstance(model.optimizer, keras.optimizers.SGD)


def test_compiled_steps_per_execution_is_kept_and_a_contradiction_refused() -> None:
    model = mlp()
    model.compile(
        optimizer="sgd",
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=2,
    )
    _, info = _loop(model, log_every_n_steps=2).run()
    assert info["steps_per_execution"] == 2
    with pytest.raises(ConfigError, match=r"steps_per_execution=4 and the steps_per_execution=2"):
        _loop(model, backend_options={"steps_per_execution": 4}).run()
