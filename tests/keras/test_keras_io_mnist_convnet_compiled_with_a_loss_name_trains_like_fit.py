"""The keras-io "Simple MNIST convnet" example as its users wrote it — ``compile(loss=
"categorical_crossentropy", optimizer="adam", metrics=["accuracy"])``, one-hot labels —
shrunk to scikit-learn's 8x8x1 digits (``padding="same"``, fewer filters). The loop trains
it without ``loss=`` (Keras reduces the per-sample loss the name gives, as ``compile``
does) and reaches the test accuracy of the plain ``model.fit`` run on the same data and
seed; ``val_dataset`` reports ``val_accuracy`` for the compiled ``accuracy`` metric, equal
to ``model.evaluate`` on the same weights. (Source: https://keras.io/examples/vision/mnist_convnet/)"""

from __future__ import annotations

import keras
import numpy as np
from keras import layers
from sklearn.datasets import load_digits

from pipekit_train import Callback, TrainingLoop

NUM_CLASSES = 10
INPUT_SHAPE = (8, 8, 1)


def _data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    d = load_digits()
    x = (d.images / 16.0).astype("float32")[..., None]
    y = keras.utils.to_categorical(d.target, NUM_CLASSES)
    return x[:1400], y[:1400], x[1400:], y[1400:]


def _convnet() -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input(shape=INPUT_SHAPE),
            layers.Conv2D(32, kernel_size=(3, 3), activation="relu", padding="same"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Conv2D(64, kernel_size=(3, 3), activation="relu", padding="same"),
            layers.MaxPooling2D(pool_size=(2, 2)),
            layers.Flatten(),
            layers.Dropout(0.5),
            layers.Dense(NUM_CLASSES, activation="softmax"),
        ]
    )
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    return model


class EvalRecorder(Callback):
    def __init__(self) -> None:
        self.rows: list[dict[str, float]] = []

    def on_eval_end(self, loop, state, metrics) -> None:
        self.rows.append(dict(metrics))


def test_mnist_convnet_with_a_loss_name_trains_like_fit() -> None:
    x_train, y_train, x_test, y_test = _data()
    batch_size, epochs = 128, 15
    steps = epochs * -(-len(x_train) // batch_size)

    plain = _convnet()
    plain.fit(x_train, y_train, batch_size=batch_size, epochs=epochs, verbose=0)
    fit_accuracy = plain.evaluate(x_test, y_test, verbose=0, return_dict=True)["accuracy"]

    model = _convnet()
    recorder = EvalRecorder()
    TrainingLoop(
        model_op=model,
        dataset={"x": x_train, "y": y_train},
        val_dataset={"x": x_test, "y": y_test},
        batch_size=batch_size,
        max_steps=steps,
        eval_every_n_steps=steps,
        callbacks=[recorder],
        backend="keras",
    ).run()
    ours = model.evaluate(x_test, y_test, verbose=0, return_dict=True)
    assert fit_accuracy > 0.85, fit_accuracy
    assert abs(ours["accuracy"] - fit_accuracy) < 0.04, (ours["accuracy"], fit_accuracy)
    last = recorder.rows[-1]
    assert set(last) == {"val_loss", "val_accuracy"}, last
    assert abs(last["val_accuracy"] - ours["accuracy"]) < 1e-6, (last, ours)
    assert abs(last["val_loss"] - ours["loss"]) < 1e-4, (last, ours)
