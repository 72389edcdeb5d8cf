"""One check for the ``compile(loss="crossentropy")`` tests: the loop trains the model as
Keras' ``train_on_batch`` does on the same batches, and its ``val_loss`` is the loss Keras
picked from the shapes (the named function, reduced as ``compile`` reduces it)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import keras
import numpy as np

from pipekit_train import Callback, TrainingLoop
from pipekit_train.engine import BatchSource


class _EvalRecorder(Callback):
    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []

    def on_eval_end(self, loop, state, metrics) -> None:
        self.rows.append(dict(metrics))


def assert_trains_like_train_on_batch(
    build: Callable[[], Any],
    data: dict[str, np.ndarray],
    val: dict[str, np.ndarray],
    *,
    picked: str,
    batch_size: int,
    steps: int,
) -> dict[str, float]:
    """``build()`` (a model compiled with ``loss="crossentropy"``) trained by the loop for
    ``steps`` equals ``train_on_batch`` on the loop's batches (seed 0); the loop's last
    ``val_loss`` equals ``model.evaluate`` and the mean of ``keras.losses.<picked>`` on
    ``val``. Returns the loop's last evaluation row."""
    model = build()
    recorder = _EvalRecorder()
    _, info = TrainingLoop(
        model_op=model,
        dataset=data,
        val_dataset=val,
        batch_size=batch_size,
        max_steps=steps,
        eval_every_n_steps=steps,
        seed=0,
        callbacks=[recorder],
        backend="keras",
    ).run()
    assert info["final_step"] == steps

    plain = build()
    rows = BatchSource({"x": np.arange(len(data["x"]))}, batch_size, 0)  # the loop's order
    for step in range(steps):
        take = rows[step]["x"]
        plain.train_on_batch(data["x"][take], data["y"][take])
    assert len(plain.trainable_variables) == len(model.trainable_variables)
    for ours, theirs in zip(model.trainable_variables, plain.trainable_variables, strict=True):
        np.testing.assert_allclose(np.asarray(ours.value), np.asarray(theirs.value), atol=1e-6)

    last = recorder.rows[-1]
    evaluated = model.evaluate(val["x"], val["y"], verbose=0, return_dict=True)
    assert abs(last["val_loss"] - evaluated["loss"]) < 1e-5, (last, evaluated)
    pred = model.predict(val["x"], verbose=0)
    per_sample = getattr(keras.losses, picked)(val["y"], pred)
    np.testing.assert_allclose(last["val_loss"], float(np.mean(per_sample)), rtol=1e-5)
    return last
