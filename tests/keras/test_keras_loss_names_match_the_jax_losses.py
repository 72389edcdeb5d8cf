"""Each pipekit loss name means on Keras what it means on the JAX backends.

The Keras loss the backend compiles, applied to the same predictions and targets, equals
``pipekit_train.jax.losses`` for that name (logits for the cross-entropies). A pipekit
callable is ``(pred, target)`` and reaches the model in that order; a ``KerasTask``
passes Keras' own loss and compile options through.
"""

from __future__ import annotations

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop
from pipekit_train.adapters.keras import KerasTask
from pipekit_train.adapters.keras._losses import resolve_keras_loss
from pipekit_train.jax.losses import resolve_loss

rng = np.random.default_rng(0)
LOGITS = rng.normal(size=(16, 5)).astype("float32")
CASES = {
    "cross_entropy": (LOGITS, rng.integers(0, 5, 16).astype("int32")),
    "cross_entropy_onehot": (LOGITS, np.eye(5, dtype="float32")[rng.integers(0, 5, 16)]),
    "binary_cross_entropy": (LOGITS, (rng.random((16, 5)) > 0.5).astype("float32")),
    "mse": (LOGITS, rng.normal(size=(16, 5)).astype("float32")),
    "mae": (LOGITS, rng.normal(size=(16, 5)).astype("float32")),
    "huber": (LOGITS * 3, rng.normal(size=(16, 5)).astype("float32")),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_keras_loss_equals_the_jax_loss(case: str) -> None:
    name = case.removesuffix("_onehot")
    pred, target = CASES[case]
    ours = float(np.asarray(resolve_keras_loss(keras, name, target)(target, pred)))
    ref = float(resolve_loss(name)(pred, target))
    assert ours == pytest.approx(ref, rel=1e-5, abs=1e-6)


def test_callable_loss_gets_pred_then_target() -> None:
    seen: list[tuple[tuple, tuple]] = []

    def my_loss(pred, target):
        seen.append((tuple(pred.shape), tuple(target.shape)))
        return keras.ops.mean(keras.ops.square(pred[:, 0] - keras.ops.cast(target, "float32")))

    TrainingLoop(
        model_op=mlp(hidden=8), dataset=digits(64), loss=my_loss, batch_size=32, max_steps=2,
        backend="keras",
    ).run()  # fmt: skip
    assert seen and all(p == (32, 10) and t == (32,) for p, t in seen)


def test_keras_task_passes_keras_loss_and_compile_options() -> None:
    model = mlp(hidden=8)
    task = KerasTask(
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        classification="cross_entropy",
        compile_kwargs={"jit_compile": True},
    )
    _, info = TrainingLoop(
        model_op=model, dataset=digits(128), val_dataset=digits(64, offset=1500), task=task,
        batch_size=32, max_steps=4, backend="keras",
    ).run()  # fmt: skip
    assert int(np.asarray(model.optimizer.iterations.value)) == 4
    assert {"val_loss", "val_accuracy"} <= set(info["final_metrics"])
