"""The keras backend's pre-``fit`` check of model, data and loss (``check_fits``) traces a
built model (``jax.eval_shape``): it compiles and runs nothing, changes no variable, and still
returns the head's width and refuses a non-scalar loss. A model it cannot trace — one not
built yet — gets the eager call, which builds it and reports what is wrong."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp
from compile_watch import compiles

from pipekit_train.adapters.keras._checks import check_fits
from pipekit_train.errors import ConfigError, DataError

BATCH = {k: v[:16] for k, v in digits(16).items()}
LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def test_a_built_model_is_traced_not_compiled() -> None:
    model = mlp(dropout=0.5)
    before = [np.array(v.value) for v in model.variables]
    with compiles() as seen:
        width = check_fits(model, LOSS, BATCH, "dataset")
    assert width == 10
    assert seen == []
    after = [np.array(v.value) for v in model.variables]
    assert all(np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_positive_control_an_eager_call_compiles() -> None:
    model = mlp()
    with compiles() as seen:
        model(BATCH["x"], training=False)
    assert seen


def test_a_non_scalar_loss_is_refused_on_the_traced_path() -> None:
    def per_example(y_true: object, y_pred: object) -> object:
        return keras.losses.sparse_categorical_crossentropy(y_true, y_pred, from_logits=True)

    with pytest.raises(ConfigError, match="scalar") as info:
        check_fits(mlp(), per_example, BATCH, "dataset")
    assert info.value.field == "loss"


def test_data_that_does_not_fit_is_a_data_error() -> None:
    with pytest.raises(DataError, match="does not fit the model"):
        check_fits(mlp(inputs=32), LOSS, BATCH, "dataset")


def test_an_unbuilt_model_gets_the_eager_call_and_is_built() -> None:
    model = keras.Sequential([keras.layers.Dense(8, activation="relu"), keras.layers.Dense(10)])
    assert not model.built
    assert check_fits(model, LOSS, BATCH, "dataset") == 10
    assert model.built
