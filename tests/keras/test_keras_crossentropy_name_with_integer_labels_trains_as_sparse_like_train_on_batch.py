"""The Keras guide "Training & evaluation with the built-in methods": its
``get_uncompiled_model()`` (two Dense(64, relu), a Dense(10, softmax) ``predictions``
head) compiled as its ``get_compiled_model()`` is — ``optimizer="rmsprop"``,
``metrics=["sparse_categorical_accuracy"]`` — with ``loss="crossentropy"`` for the guide's
``"sparse_categorical_crossentropy"``, on integer labels (scikit-learn's digits for MNIST,
64 inputs for 784). The loop resolves it as Keras does, to
``sparse_categorical_crossentropy``, before compiling: it trains to the weights of Keras'
``train_on_batch`` on the same batches, and its ``val_loss`` is the mean sparse
categorical cross-entropy, equal to ``model.evaluate``.
(Source: https://keras.io/guides/training_with_built_in_methods/)"""

from __future__ import annotations

import keras
from _keras_crossentropy import assert_trains_like_train_on_batch
from _keras_helpers import digits
from keras import layers


def get_uncompiled_model() -> keras.Model:
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(64,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    return model


def get_compiled_model() -> keras.Model:
    model = get_uncompiled_model()
    model.compile(
        optimizer="rmsprop",
        loss="crossentropy",
        metrics=["sparse_categorical_accuracy"],
    )
    return model


def test_crossentropy_name_with_integer_labels_trains_as_sparse_like_train_on_batch() -> None:
    train, val = digits(256), digits(128, offset=256)
    assert train["y"].ndim == 1 and train["y"].dtype.kind == "i"  # class ids, not one-hot
    last = assert_trains_like_train_on_batch(
        get_compiled_model,
        train,
        val,
        picked="sparse_categorical_crossentropy",
        batch_size=32,
        steps=6,
    )
    assert {"val_loss", "val_sparse_categorical_accuracy"} <= set(last), last
