"""`KerasModelOp`: the trained op calls, saves to `.keras` and loads with safe mode on."""

from __future__ import annotations

import zipfile
from pathlib import Path

import keras
import numpy as np
import pytest
from _keras_custom_model import TwoLayer
from _keras_helpers import digits, mlp

from pipekit_train import Operator, TrainingLoop
from pipekit_train.adapters.keras import KerasModelOp
from pipekit_train.errors import ConfigError


def _train(model_op) -> KerasModelOp:
    op, _ = TrainingLoop(
        model_op=model_op, dataset=digits(128), loss="cross_entropy", batch_size=32,
        max_steps=4, backend="keras",
    ).run()  # fmt: skip
    return op


def test_bare_model_comes_back_wrapped_and_callable() -> None:
    model = mlp()
    op = _train(model)
    assert isinstance(op, KerasModelOp) and op.model is model
    assert isinstance(op, Operator)
    x = digits(8)["x"]
    np.testing.assert_allclose(
        np.asarray(op(x)), np.asarray(model.predict(x, verbose=0)), rtol=1e-6
    )


def test_given_op_is_returned_itself() -> None:
    op = KerasModelOp(mlp())
    assert _train(op) is op


def test_sequential_save_load_roundtrip_without_pickle(tmp_path: Path) -> None:
    op = _train(mlp())
    path = op.save(tmp_path / "model")
    assert path == tmp_path / "model" / "model.keras"
    with zipfile.ZipFile(path) as archive:
        assert not [n for n in archive.namelist() if n.endswith((".pkl", ".pickle"))]
    loaded = KerasModelOp.load(tmp_path / "model")
    x = digits(8)["x"]
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(op(x)))


def test_registered_subclassed_model_roundtrips(tmp_path: Path) -> None:
    keras.utils.set_random_seed(0)
    op = _train(TwoLayer(hidden=12))
    op.save(tmp_path / "custom.keras")
    loaded = KerasModelOp.load(tmp_path / "custom.keras")
    assert isinstance(loaded.model, TwoLayer) and loaded.model.hidden == 12
    x = digits(8)["x"]
    np.testing.assert_array_equal(np.asarray(loaded(x)), np.asarray(op(x)))


def test_unregistered_lambda_is_refused_by_safe_mode(tmp_path: Path) -> None:
    model = keras.Sequential(
        [keras.Input((64,)), keras.layers.Lambda(lambda t: t * 2.0), keras.layers.Dense(10)]
    )
    KerasModelOp(model).save(tmp_path / "lambda.keras")
    with pytest.raises(ConfigError, match="cannot be loaded safely"):
        KerasModelOp.load(tmp_path / "lambda.keras")


def test_load_of_a_missing_archive_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no .keras archive"):
        KerasModelOp.load(tmp_path / "nothing")
