"""A prediction/target pair that would broadcast — a one-unit regression head against
targets of shape (n, 3), a three-unit head against (n, 1) — is refused before training by
core's shape rule (``pipekit_train.losses.align_shapes``), for the loop's loss name and for
a loss the user compiled (by name or as a Keras object); Keras' own loss compares the same
pair without a word (it broadcasts it to (n, 3)), so ``fit`` would train on it. The aligned
pair, (n, 1) against (n,), trains. Data: scikit-learn's diabetes regression."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from sklearn.datasets import load_diabetes

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError


def _data(width: int | None) -> dict[str, np.ndarray]:
    x, y = load_diabetes(return_X_y=True)
    y = (y / 100.0).astype("float32")
    if width is not None:
        y = np.repeat(y[:, None], width, axis=1)
    return {"x": x.astype("float32"), "y": y}


def _regressor(units: int) -> keras.Model:
    keras.utils.set_random_seed(0)
    return keras.Sequential(
        [keras.Input((10,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(units)]
    )


def _loop(model: keras.Model, data: dict[str, np.ndarray], **fields) -> TrainingLoop:
    return TrainingLoop(
        model_op=model, dataset=data, batch_size=32, max_steps=3, backend="keras", **fields
    )


@pytest.mark.parametrize(
    ("units", "width", "compiled"),
    [
        (1, 3, None),  # the loop's "mse"
        (3, 1, "mse"),  # compiled with a loss name
        (1, 3, "mean_absolute_error"),
        (3, 1, "object"),  # compiled with keras.losses.MeanSquaredError()
    ],
)
def test_a_pair_that_broadcasts_is_refused_before_training(
    units: int, width: int, compiled: str | None
) -> None:
    data = _data(width)
    model = _regressor(units)
    # Keras itself compares the pair without a word: it broadcasts to (32, 3).
    value = keras.losses.MeanSquaredError()(data["y"][:32], model(data["x"][:32]))
    assert np.isfinite(float(value))
    before = [np.array(v.value) for v in model.trainable_variables]
    fields: dict = {"loss": "mse"}
    if compiled is not None:
        loss = keras.losses.MeanSquaredError() if compiled == "object" else compiled
        model.compile(optimizer="adam", loss=loss)
        fields = {}
    with pytest.raises(ConfigError) as err:
        _loop(model, data, **fields).run()
    message = str(err.value)
    assert f"predictions of shape (32, {units})" in message, message
    assert f"targets of shape (32, {width})" in message, message
    assert ("compile()d" in message) == (compiled is not None), message
    assert err.value.field == ("loss" if compiled is None else "model_op")
    after = [np.array(v.value) for v in model.trainable_variables]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_a_trailing_axis_of_one_is_aligned_and_trains() -> None:
    model = _regressor(1)
    model.compile(optimizer="adam", loss="mse")
    _, info = _loop(model, _data(None)).run()
    assert info["final_step"] == 3
