"""JaxModelOp save/load gives bit-identical outputs, with ``like=`` and with ``factory=``."""

from __future__ import annotations

import json
import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _eqx_models import FACTORY_SOURCE

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.operator import Operator

X = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)


def mlp(seed):
    return eqx.nn.MLP(5, 3, 16, 2, key=jax.random.key(seed))


def same_bits(a, b):
    return np.asarray(a).tobytes() == np.asarray(b).tobytes() and a.dtype == b.dtype


def assert_same_module(a, b):
    la, lb = (
        jax.tree_util.tree_leaves(eqx.filter(a, eqx.is_array)),
        jax.tree_util.tree_leaves(eqx.filter(b, eqx.is_array)),
    )
    assert len(la) == len(lb)
    assert all(same_bits(x, y) for x, y in zip(la, lb, strict=True))


@pytest.fixture
def factory_module(tmp_path, monkeypatch):
    name = "pipekit_test_factory_models"
    (tmp_path / f"{name}.py").write_text(FACTORY_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    yield name
    sys.modules.pop(name, None)


@pytest.mark.parametrize("how", ["module", "callable", "op"])
def test_roundtrip_with_like(tmp_path, how):
    op = JaxModelOp(mlp(1))
    expected = op(X)
    op.save(tmp_path / "op")
    like = {"module": mlp(99), "callable": lambda: mlp(42), "op": JaxModelOp(mlp(7))}[how]
    loaded = JaxModelOp.load(tmp_path / "op", like=like)
    assert isinstance(loaded, JaxModelOp)
    assert_same_module(loaded.module, op.module)
    assert same_bits(loaded(X), expected)


def test_roundtrip_with_factory(tmp_path, factory_module):
    kwargs = {"in_size": 5, "out_size": 3, "width": 16, "depth": 2, "seed": 0}
    trained = eqx.tree_at(lambda m: m.layers[0].bias, mlp(0), jnp.arange(16.0))
    op = JaxModelOp(trained, factory=f"{factory_module}:make_mlp", factory_kwargs=kwargs)
    expected = op(X)
    op.save(tmp_path / "op")

    # no like=: built from the recorded factory, which trusted=True allows to be imported
    loaded = JaxModelOp.load(str(tmp_path / "op"), trusted=True)
    assert same_bits(loaded(X), expected)
    assert_same_module(loaded.module, trained)
    assert loaded.factory == f"{factory_module}:make_mlp"
    assert loaded.factory_kwargs == kwargs

    # the factory record survives a second save/load
    loaded.save(tmp_path / "again")
    assert same_bits(JaxModelOp.load(tmp_path / "again", trusted=[factory_module])(X), expected)


def test_op_json_describes_the_save(tmp_path, factory_module):
    op = JaxModelOp(
        mlp(0),
        factory=f"{factory_module}:make_mlp",
        factory_kwargs={"in_size": 5, "out_size": 3, "width": 16, "depth": 2},
    )
    op.save(tmp_path)
    meta = json.loads((tmp_path / "op.json").read_text())
    assert meta["format_version"] == 1
    assert meta["op_class"] == "pipekit_train.adapters.equinox:JaxModelOp"
    assert meta["factory"] == f"{factory_module}:make_mlp"
    assert meta["factory_kwargs"]["width"] == 16
    assert meta["leaves"][0] == {"path": ".layers[0].weight", "shape": [16, 5], "dtype": "float32"}
    assert len(meta["leaves"]) == 6
    assert "pipekit_version" in meta and "jax" in meta["versions"]


def test_saving_over_a_previous_save_replaces_it(tmp_path):
    JaxModelOp(mlp(1)).save(tmp_path)
    second = JaxModelOp(mlp(2))
    second.save(tmp_path)
    assert same_bits(JaxModelOp.load(tmp_path, like=mlp(0))(X), second(X))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["op.json", "weights.eqx"]


def test_scalar_and_non_float_leaves_roundtrip(tmp_path):
    class Scaled(eqx.Module):
        linear: eqx.nn.Linear
        scale: float
        counts: jax.Array

        def __call__(self, x):
            return self.linear(x) * self.scale + self.counts

    module = Scaled(eqx.nn.Linear(5, 2, key=jax.random.key(0)), 2.5, jnp.array([1, 2], jnp.int32))
    op = JaxModelOp(module)
    op.save(tmp_path)
    skeleton = Scaled(eqx.nn.Linear(5, 2, key=jax.random.key(3)), 0.0, jnp.zeros(2, jnp.int32))
    loaded = JaxModelOp.load(tmp_path, like=skeleton)
    assert loaded.module.scale == 2.5
    assert same_bits(loaded(X), op(X))


def test_jax_model_op_is_an_operator():
    assert isinstance(JaxModelOp(mlp(0)), Operator)
    assert not isinstance(object(), Operator)
