"""Loading into the wrong structure, or with no structure at all, is a clear error."""

from __future__ import annotations

import sys

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from _eqx_models import FACTORY_SOURCE

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.errors import CheckpointError, ConfigError


def mlp(width=16, depth=2, dtype=None):
    return eqx.nn.MLP(5, 3, width, depth, key=jax.random.key(0), dtype=dtype)


@pytest.fixture
def saved(tmp_path):
    JaxModelOp(mlp()).save(tmp_path / "op")
    return tmp_path / "op"


def test_different_shape_names_the_first_differing_leaf(saved):
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(saved, like=mlp(width=8))
    message = str(info.value)
    assert "first differing leaf .layers[0].weight" in message
    assert "saved shape (16, 5) float32" in message and "skeleton shape (8, 5) float32" in message


def test_different_dtype_names_the_leaf(saved):
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(saved, like=mlp(dtype=jnp.float16))
    assert ".layers[0].weight" in str(info.value) and "float16" in str(info.value)


def test_different_leaf_count(saved):
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(saved, like=mlp(width=16, depth=3))
    message = str(info.value)
    assert "first differing leaf .layers[2].weight" in message


def test_later_leaf_difference_is_found(tmp_path):
    JaxModelOp(
        eqx.nn.Sequential(
            [eqx.nn.Linear(4, 4, key=jax.random.key(0)), eqx.nn.Linear(4, 2, key=jax.random.key(1))]
        )
    ).save(tmp_path)
    other = eqx.nn.Sequential(
        [eqx.nn.Linear(4, 4, key=jax.random.key(0)), eqx.nn.Linear(4, 3, key=jax.random.key(1))]
    )
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(tmp_path, like=other)
    assert "first differing leaf .layers[1].weight" in str(info.value)


def test_no_like_and_no_factory_explains_both_options(saved):
    with pytest.raises(ConfigError) as info:
        JaxModelOp.load(saved)
    message = str(info.value)
    assert info.value.field == "like"
    assert "like=" in message and "factory=" in message


@pytest.mark.parametrize("bad", [42, lambda: "not a module"])
def test_like_of_the_wrong_kind(saved, bad):
    with pytest.raises(ConfigError) as info:
        JaxModelOp.load(saved, like=bad)
    assert info.value.field == "like"
    assert "equinox.Module" in str(info.value)


def test_recorded_factory_that_cannot_be_imported(tmp_path):
    op = JaxModelOp(mlp(), factory="no_such_pipekit_module:make", factory_kwargs={"a": 1})
    op.save(tmp_path)
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(tmp_path, trusted=True)
    assert "no_such_pipekit_module:make" in str(info.value) and "like=" in str(info.value)
    # like= still works for such a save
    assert JaxModelOp.load(tmp_path, like=mlp()).factory == "no_such_pipekit_module:make"


@pytest.mark.parametrize(
    ("fn", "fragment"), [("broken", "factory exploded"), ("not_a_module", "equinox.Module")]
)
def test_recorded_factory_that_fails(tmp_path, monkeypatch, fn, fragment):
    name = "pipekit_test_factory_models_bad"
    (tmp_path / f"{name}.py").write_text(FACTORY_SOURCE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    JaxModelOp(mlp(), factory=f"{name}:{fn}").save(tmp_path / "op")
    with pytest.raises((CheckpointError, ConfigError)) as info:
        JaxModelOp.load(tmp_path / "op", trusted=True)
    assert fragment in str(info.value)
    sys.modules.pop(name, None)


def test_not_a_saved_op(tmp_path):
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(tmp_path, like=mlp())
    assert "op.json" in str(info.value)


def test_truncated_weights(saved):
    weights = saved / "weights.eqx"
    weights.write_bytes(weights.read_bytes()[:200])
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(saved, like=mlp())
    assert "weights.eqx" in str(info.value)


def test_newer_format_is_refused(saved):
    meta = saved / "op.json"
    meta.write_text(meta.read_text().replace('"format_version": 1', '"format_version": 99'))
    with pytest.raises(CheckpointError) as info:
        JaxModelOp.load(saved, like=mlp())
    assert "format_version 99" in str(info.value)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"factory": "not an import string"}, "JaxModelOp.factory"),
        ({"factory": "pkg.mod"}, "JaxModelOp.factory"),
        ({"factory_kwargs": {"a": 1}}, "JaxModelOp.factory"),
        (
            {"factory": "pkg.mod:fn", "factory_kwargs": {"key": jax.random.key(0)}},
            "JaxModelOp.factory_kwargs",
        ),
    ],
)
def test_bad_factory_arguments(kwargs, field):
    with pytest.raises(ConfigError) as info:
        JaxModelOp(mlp(), **kwargs)
    assert info.value.field == field


def test_save_onto_a_file_path(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    with pytest.raises(CheckpointError):
        JaxModelOp(mlp()).save(target)
