"""``JaxModelOp.load`` imports or calls nothing named in ``op.json`` unless the caller says so.

A saved folder is data: an edited ``factory`` (``os:system`` with a command as its kwargs,
or a module whose import runs code) must not run on ``load(path)``. The caller either
passes the code (``factory=`` / ``like=``) or trusts the folder (``trusted=True`` / a list
of module prefixes).
"""

from __future__ import annotations

import sys

import pytest
from _eqx_helpers import FACTORY, leaves, make_model, make_module
from recorded_code import edit_op_json, marker_module

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.errors import CheckpointError, PipekitError, UntrustedCodeError


@pytest.fixture
def saved(tmp_path):
    op = make_model(width=4)
    op.save(tmp_path / "op")
    return op, tmp_path / "op"


def _assert_names_both_ways(err: PipekitError, recorded: str) -> None:
    message = str(err)
    assert isinstance(err, UntrustedCodeError) and isinstance(err, CheckpointError)
    assert "op.json" in message and "'factory'" in message and recorded in message
    assert "factory=" in message and "trusted=True" in message


def test_an_edited_os_system_factory_is_refused_and_not_called(saved, tmp_path):
    _, folder = saved
    marker = tmp_path / "ran"
    edit_op_json(folder, factory="os:system", factory_kwargs={"command": f"touch {marker}"})
    with pytest.raises(UntrustedCodeError) as info:
        JaxModelOp.load(folder)
    _assert_names_both_ways(info.value, "os:system")
    assert not marker.exists()


def test_a_recorded_module_is_not_imported(saved, tmp_path, monkeypatch):
    _, folder = saved
    marker = marker_module(tmp_path, monkeypatch, "pipekit_evil_eqx_factory")
    edit_op_json(folder, factory="pipekit_evil_eqx_factory:make")
    with pytest.raises(UntrustedCodeError) as info:
        JaxModelOp.load(folder)
    _assert_names_both_ways(info.value, "pipekit_evil_eqx_factory:make")
    # an allow-list that does not cover the module refuses it the same way
    with pytest.raises(UntrustedCodeError, match="does not cover"):
        JaxModelOp.load(folder, trusted=["pipekit_evil"])
    assert not marker.exists() and "pipekit_evil_eqx_factory" not in sys.modules


def test_factory_or_like_given_loads_without_resolving_the_record(saved, tmp_path, monkeypatch):
    op, folder = saved
    marker = marker_module(tmp_path, monkeypatch, "pipekit_evil_eqx_factory2")
    edit_op_json(folder, factory="pipekit_evil_eqx_factory2:make")
    by_factory = JaxModelOp.load(folder, factory=make_model)  # called with the recorded kwargs
    by_like = JaxModelOp.load(folder, like=lambda: make_module(width=4))
    for loaded in (by_factory, by_like):
        assert [a.tobytes() for a in leaves(loaded)] == [a.tobytes() for a in leaves(op)]
    assert not marker.exists() and "pipekit_evil_eqx_factory2" not in sys.modules


def test_trusted_loads_the_legitimate_folder(saved):
    op, folder = saved
    for trusted in (True, [FACTORY.partition(":")[0]]):
        loaded = JaxModelOp.load(folder, trusted=trusted)
        assert [a.tobytes() for a in leaves(loaded)] == [a.tobytes() for a in leaves(op)]
        assert loaded.factory == FACTORY


def test_bad_trusted_values_and_like_with_factory_are_config_errors(saved):
    _, folder = saved
    with pytest.raises(PipekitError, match=r"trusted=\['_eqx_helpers'\]"):
        JaxModelOp.load(folder, trusted="_eqx_helpers")
    with pytest.raises(PipekitError, match="not both"):
        JaxModelOp.load(folder, like=make_module(width=4), factory=make_model)
