"""Saving and loading a JaxModelOp never pickles: two files, plain .npy records and JSON."""

from __future__ import annotations

import io
import json
import pickle

import equinox as eqx
import jax
import numpy as np
import pytest

from pipekit_train.adapters.equinox import JaxModelOp


def _refuse(*args, **kwargs):
    raise AssertionError("pickle was used")


@pytest.fixture
def no_pickle(monkeypatch):
    for name in ("dump", "dumps", "load", "loads", "Pickler", "Unpickler"):
        monkeypatch.setattr(pickle, name, _refuse)


def test_no_pickle_on_save_or_load(tmp_path, no_pickle):
    module = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))
    JaxModelOp(module).save(tmp_path)
    loaded = JaxModelOp.load(tmp_path, like=module)
    x = np.ones((3, 4), np.float32)
    assert np.array_equal(loaded(x), JaxModelOp(module)(x))


def test_only_weights_and_json_are_written(tmp_path):
    module = eqx.nn.MLP(4, 2, 8, 2, key=jax.random.key(0))
    JaxModelOp(module).save(tmp_path / "op")
    files = sorted(p.name for p in (tmp_path / "op").rglob("*"))
    assert files == ["op.json", "weights.eqx"]
    json.loads((tmp_path / "op" / "op.json").read_text())

    # weights.eqx is a run of .npy records, each readable with allow_pickle=False
    data = io.BytesIO((tmp_path / "op" / "weights.eqx").read_bytes())
    count = 0
    while data.tell() < len(data.getvalue()):
        assert data.getvalue()[data.tell() : data.tell() + 6] == b"\x93NUMPY"
        array = np.load(data, allow_pickle=False)
        assert array.dtype != object
        count += 1
    assert count == len(jax.tree_util.tree_leaves(eqx.filter(module, eqx.is_array)))
