"""``TorchModelOp.load`` imports or calls nothing named in ``op.json`` unless the caller says so.

The op records ``torch.nn:Linear`` with its JSON kwargs. Edited to ``os:system`` (kwargs
holding a command) or to a module whose import runs code, ``load(path)`` refuses before
importing anything; ``factory=`` / ``like=`` load without resolving the record, and
``trusted=True`` (or ``trusted=["torch"]``) loads the legitimate folder.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import torch
from recorded_code import edit_op_json, marker_module

from pipekit_train.adapters.lightning import TorchModelOp
from pipekit_train.errors import CheckpointError, UntrustedCodeError

X = np.arange(6, dtype=np.float32).reshape(2, 3)


@pytest.fixture
def saved(tmp_path):
    torch.manual_seed(0)
    op = TorchModelOp(
        torch.nn.Linear(3, 2),
        factory="torch.nn:Linear",
        factory_kwargs={"in_features": 3, "out_features": 2},
    )
    op.save(tmp_path / "op")
    return op, tmp_path / "op"


def _assert_names_both_ways(err: Exception, recorded: str) -> None:
    message = str(err)
    assert isinstance(err, UntrustedCodeError) and isinstance(err, CheckpointError)
    assert "op.json" in message and "'factory'" in message and recorded in message
    assert "factory=" in message and "trusted=True" in message


def test_an_edited_os_system_factory_is_refused_and_not_called(saved, tmp_path):
    _, folder = saved
    marker = tmp_path / "ran"
    edit_op_json(folder, factory="os:system", factory_kwargs={"command": f"touch {marker}"})
    with pytest.raises(UntrustedCodeError) as info:
        TorchModelOp.load(folder)
    _assert_names_both_ways(info.value, "os:system")
    edit_op_json(folder, factory="subprocess:getoutput", factory_kwargs={"cmd": f"touch {marker}"})
    with pytest.raises(UntrustedCodeError, match="subprocess:getoutput"):
        TorchModelOp.load(folder, trusted=["torch"])  # the allow-list does not cover it
    assert not marker.exists()


def test_a_recorded_module_is_not_imported(saved, tmp_path, monkeypatch):
    _, folder = saved
    marker = marker_module(tmp_path, monkeypatch, "pipekit_evil_torch_factory")
    edit_op_json(folder, factory="pipekit_evil_torch_factory:make")
    with pytest.raises(UntrustedCodeError) as info:
        TorchModelOp.load(folder)
    _assert_names_both_ways(info.value, "pipekit_evil_torch_factory:make")
    assert not marker.exists() and "pipekit_evil_torch_factory" not in sys.modules


def test_factory_or_like_given_loads_without_resolving_the_record(saved, tmp_path, monkeypatch):
    op, folder = saved
    marker = marker_module(tmp_path, monkeypatch, "pipekit_evil_torch_factory2")
    edit_op_json(folder, factory="pipekit_evil_torch_factory2:make")
    by_factory = TorchModelOp.load(folder, factory=torch.nn.Linear)  # the recorded kwargs
    by_like = TorchModelOp.load(folder, like=torch.nn.Linear(3, 2))
    for loaded in (by_factory, by_like):
        np.testing.assert_array_equal(loaded(X), op(X))
    assert not marker.exists() and "pipekit_evil_torch_factory2" not in sys.modules


def test_trusted_loads_the_legitimate_folder(saved):
    op, folder = saved
    for trusted in (True, ["torch"], ("torch.nn",)):
        loaded = TorchModelOp.load(folder, trusted=trusted)
        np.testing.assert_array_equal(loaded(X), op(X))
        assert loaded.factory == "torch.nn:Linear"
