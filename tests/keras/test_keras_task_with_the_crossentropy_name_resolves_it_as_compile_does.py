"""``KerasTask(loss="crossentropy")`` — a loss for the loop's own ``compile`` of an
uncompiled model — is resolved from the first batch as Keras resolves it: on integer
labels and a softmax head, ``val_loss`` is the mean sparse categorical cross-entropy (equal
to ``model.evaluate``), and the model is compiled with the name itself. A pair Keras would
refuse (one-hot targets of fewer classes) is a ``ConfigError`` on ``task.loss`` naming it,
before training."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from _keras_helpers import digits

from pipekit_train import Callback, TrainingLoop
from pipekit_train.adapters.keras import KerasTask
from pipekit_train.errors import ConfigError


class EvalRecorder(Callback):
    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []

    def on_eval_end(self, loop, state, metrics) -> None:
        self.rows.append(dict(metrics))


def _softmax_mlp() -> keras.Model:
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(32, activation="relu"),
            keras.layers.Dense(10, activation="softmax"),
        ]
    )


def test_task_crossentropy_on_integer_labels_is_sparse_categorical() -> None:
    train, val = digits(128), digits(64, offset=128)
    model, recorder = _softmax_mlp(), EvalRecorder()
    TrainingLoop(
        model_op=model,
        task=KerasTask(loss="crossentropy"),
        dataset=train,
        val_dataset=val,
        batch_size=32,
        max_steps=4,
        eval_every_n_steps=4,
        callbacks=[recorder],
        backend="keras",
    ).run()
    assert model.loss == "crossentropy"  # compiled with the name: Keras resolves it in fit too
    val_loss = recorder.rows[-1]["val_loss"]
    per_sample = keras.losses.sparse_categorical_crossentropy(
        val["y"], model.predict(val["x"], verbose=0)
    )
    np.testing.assert_allclose(val_loss, float(np.mean(per_sample)), rtol=1e-5)
    evaluated = model.evaluate(val["x"], val["y"], verbose=0, return_dict=True)
    assert abs(val_loss - evaluated["loss"]) < 1e-5, (val_loss, evaluated)


def test_task_crossentropy_on_a_pair_keras_refuses_is_config_error() -> None:
    data = digits(64)
    loop = TrainingLoop(
        model_op=_softmax_mlp(),
        task=KerasTask(loss="ce"),
        dataset={"x": data["x"], "y": keras.utils.to_categorical(data["y"] % 5, 5)},
        batch_size=16,
        max_steps=2,
        backend="keras",
    )
    with pytest.raises(ConfigError) as info:
        loop.run()
    assert info.value.field == "task.loss", info.value
    assert "TrainingLoop.task.loss ('ce') becomes categorical_crossentropy" in str(info.value)
