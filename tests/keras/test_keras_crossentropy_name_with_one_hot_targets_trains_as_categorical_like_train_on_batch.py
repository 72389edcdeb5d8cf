"""The keras-io "Simple MNIST convnet" example — one-hot labels from
``keras.utils.to_categorical``, ``optimizer="adam"``, ``metrics=["accuracy"]`` — compiled
with ``loss="crossentropy"`` for its ``"categorical_crossentropy"``, shrunk to
scikit-learn's 8x8x1 digits (``padding="same"``). The loop resolves it as Keras does, to
``categorical_crossentropy``, before compiling: it trains (dropout included) to the
weights of Keras' ``train_on_batch`` on the same batches, and its ``val_loss`` is the mean
categorical cross-entropy, equal to ``model.evaluate``.
(Source: https://keras.io/examples/vision/mnist_convnet/)"""

from __future__ import annotations

import keras
import numpy as np
from _keras_crossentropy import assert_trains_like_train_on_batch
from keras import layers
from sklearn.datasets import load_digits

NUM_CLASSES = 10
INPUT_SHAPE = (8, 8, 1)


def _data() -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    d = load_digits()
    x = (d.images / 16.0).astype("float32")[..., None]
    y = keras.utils.to_categorical(d.target, NUM_CLASSES)
    return {"x": x[:256], "y": y[:256]}, {"x": x[256:384], "y": y[256:384]}


def _convnet() -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input(shape=INPUT_SHAPE),
            layers.Conv2D(8, kernel_size=(3, 3), activation="relu", padding="same"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(16, kernel_size=(3, 3), activation="relu", padding="same"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(NUM_CLASSES, activation="softmax"),
        ]
    )
    model.compile(loss="crossentropy", optimizer="adam", metrics=["accuracy"])
    return model


def test_crossentropy_name_with_one_hot_targets_trains_as_categorical_like_train_on_batch() -> None:
    train, val = _data()
    last = assert_trains_like_train_on_batch(
        _convnet, train, val, picked="categorical_crossentropy", batch_size=32, steps=6
    )
    assert set(last) == {"val_loss", "val_accuracy"}, last
