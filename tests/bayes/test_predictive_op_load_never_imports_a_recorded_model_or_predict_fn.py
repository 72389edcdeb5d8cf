"""``NumpyroPredictiveOp.load`` imports nothing named in ``op.json`` unless the caller says so.

``model`` (or, for a raw log density, ``predict_fn``) edited to a module whose import runs
code (or ``this:s``, which prints on import) is refused before importing anything;
``model=`` / ``predict_fn=`` load without resolving the record, and ``trusted=True`` (or a
prefix list) loads the legitimate folder.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from _bayes_models import location, position_mean
from recorded_code import edit_op_json, marker_module

from pipekit_train.adapters.bayes import NumpyroPredictiveOp
from pipekit_train.errors import CheckpointError, UntrustedCodeError

X = np.zeros((3, 1), np.float32)


def _saved(tmp_path, raw: bool = False):
    rng = np.random.default_rng(0)
    if raw:
        samples = {"position": rng.normal(size=(1, 20, 2)).astype(np.float32)}
        op = NumpyroPredictiveOp(None, samples, predictive_samples=10, predict_fn=position_mean)
    else:
        samples = {
            "mu": rng.normal(size=(1, 20)).astype(np.float32),
            "sigma": np.full((1, 20), 0.5, np.float32),
        }
        op = NumpyroPredictiveOp(location, samples, predictive_samples=10)
    op.save(tmp_path / "op")
    return op, tmp_path / "op"


def _assert_names_both_ways(err: Exception, field: str, recorded: str) -> None:
    message = str(err)
    assert isinstance(err, UntrustedCodeError) and isinstance(err, CheckpointError)
    assert "op.json" in message and f"'{field}'" in message and recorded in message
    assert f"{field}=" in message and "trusted=True" in message


@pytest.mark.parametrize("raw", [False, True], ids=["model", "predict_fn"])
def test_a_recorded_module_is_not_imported(tmp_path, monkeypatch, raw):
    _, folder = _saved(tmp_path, raw)
    name = f"pipekit_evil_bayes_{'raw' if raw else 'model'}"
    marker = marker_module(tmp_path, monkeypatch, name)
    field = "predict_fn" if raw else "model"
    edit_op_json(folder, **{field: f"{name}:make"})
    with pytest.raises(UntrustedCodeError) as info:
        NumpyroPredictiveOp.load(folder)
    _assert_names_both_ways(info.value, field, f"{name}:make")
    assert not marker.exists() and name not in sys.modules


def test_this_s_is_not_imported(tmp_path, monkeypatch):
    _, folder = _saved(tmp_path)
    monkeypatch.delitem(sys.modules, "this", raising=False)
    edit_op_json(folder, model="this:s")
    with pytest.raises(UntrustedCodeError, match="this:s"):
        NumpyroPredictiveOp.load(folder)
    assert "this" not in sys.modules


@pytest.mark.parametrize("raw", [False, True], ids=["model", "predict_fn"])
def test_the_code_given_loads_without_resolving_the_record(tmp_path, monkeypatch, raw):
    op, folder = _saved(tmp_path, raw)
    name = f"pipekit_evil_bayes_given_{'raw' if raw else 'model'}"
    marker = marker_module(tmp_path, monkeypatch, name)
    edit_op_json(folder, **{"predict_fn" if raw else "model": f"{name}:make"})
    given = {"predict_fn": position_mean} if raw else {"model": location}
    back = NumpyroPredictiveOp.load(folder, **given)
    np.testing.assert_array_equal(np.asarray(back(X)), np.asarray(op(X)))
    assert not marker.exists() and name not in sys.modules


@pytest.mark.parametrize("raw", [False, True], ids=["model", "predict_fn"])
def test_trusted_loads_the_legitimate_folder(tmp_path, raw):
    op, folder = _saved(tmp_path, raw)
    for trusted in (True, ["_bayes_models"]):
        back = NumpyroPredictiveOp.load(folder, trusted=trusted)
        assert (back.predict_fn if raw else back.model) is (position_mean if raw else location)
        np.testing.assert_array_equal(np.asarray(back(X)), np.asarray(op(X)))
