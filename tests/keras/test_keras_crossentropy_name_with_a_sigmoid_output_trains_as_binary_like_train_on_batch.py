"""The ``Model.compile`` docs' own example — ``optimizer=keras.optimizers.Adam(1e-3)``,
``metrics=[BinaryAccuracy(), FalseNegatives()]`` — with the loss the same docs say Keras
converts from the shapes, ``loss="crossentropy"``, on a ``(n, 1)`` sigmoid output and 0/1
targets (is a digit a zero? scikit-learn's digits). The loop resolves it as Keras does,
to ``binary_crossentropy``, before compiling: it trains to the weights of Keras'
``train_on_batch`` on the same batches, and its ``val_loss`` is the mean binary
cross-entropy, equal to ``model.evaluate``.
(Source: https://keras.io/api/models/model_training_apis/#compile-method)"""

from __future__ import annotations

import keras
import numpy as np
from _keras_crossentropy import assert_trains_like_train_on_batch
from _keras_helpers import digits


def _is_zero(n: int, offset: int = 0) -> dict[str, np.ndarray]:
    d = digits(n, offset)
    return {"x": d["x"], "y": (d["y"] == 0).astype("float32")[:, None]}  # (n, 1) of 0/1


def _model() -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(16, activation="relu"),
            keras.layers.Dense(1, activation="sigmoid"),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate=1e-3),
        loss="crossentropy",
        metrics=[
            keras.metrics.BinaryAccuracy(),
            keras.metrics.FalseNegatives(),
        ],
    )
    return model


def test_crossentropy_name_with_a_sigmoid_output_trains_as_binary_like_train_on_batch() -> None:
    last = assert_trains_like_train_on_batch(
        _model,
        _is_zero(256),
        _is_zero(128, offset=256),
        picked="binary_crossentropy",
        batch_size=32,
        steps=6,
    )
    assert {"val_loss", "val_binary_accuracy", "val_false_negatives"} <= set(last), last
