"""Small state leaves are written as one array per dtype, PRNG keys as their key data; large
leaves stay their own.

Orbax's cost is per array, so packing is what keeps a checkpoint of a many-leaf model cheap
(benchmarks/ case 5). The restore side reads the layout from the meta and gives back every
leaf with its own dtype, shape and placement: jax arrays for a jax template, numpy arrays
for a numpy template (the Keras backend's).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _ckpt_helpers import FINGERPRINT, assert_state_equal

from pipekit_train.errors import CheckpointError
from pipekit_train.jax._packing import PACK_MAX_BYTES
from pipekit_train.jax.checkpoint import Checkpointer, read_state, read_trace


def _state() -> dict:
    big = PACK_MAX_BYTES // 4 + 1  # one float32 more than the packing limit
    return {
        "w": jnp.arange(12, dtype=jnp.float32).reshape(3, 4),
        "b": jnp.full((4,), 0.5, jnp.bfloat16),
        "big": jnp.linspace(0.0, 1.0, big, dtype=jnp.float32),
        "opt": (jnp.ones((2, 2)), {"count": jnp.asarray(7, jnp.int32)}),
        "rng": jax.random.fold_in(jax.random.key(0), 3),
        "scalar": jnp.asarray(2.5, jnp.float32),
    }


def _template(state: dict) -> dict:
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding), state
    )


def test_small_leaves_are_packed_per_dtype_and_restore_bit_for_bit(tmp_path):
    state = _state()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(1, state, {})
        ck.wait()
        saved = ck._mngr.item_metadata(1)["state"].tree
        restored = ck.restore(_template(state))

    names = sorted(saved)
    packed = [n for n in names if n.startswith("packed__")]
    own = [n for n in names if n.startswith("leaf__")]
    assert sorted(packed) == [
        "packed__bfloat16",
        "packed__float32",
        "packed__int32",
        "packed__uint32",  # the PRNG key's data
    ]
    assert len(own) == 1, names  # the large leaf
    # w (12) + opt[0] (4) + scalar (1) float32 values in one array
    assert tuple(saved["packed__float32"].shape) == (17,)

    assert restored is not None and restored.step == 1
    assert_state_equal(restored.state, state)
    for got, want in zip(jax.tree.leaves(restored.state), jax.tree.leaves(state), strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        assert isinstance(got, jax.Array)
    layout = restored.meta["layout"]
    assert [e["path"] for e in layout][:2] == ["b", "big"]  # key paths, in tree order


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_a_packed_prng_key_restores_as_the_same_key_on_its_sharding(tmp_path, impl):
    key = jax.random.fold_in(jax.random.key(1, impl=impl), 5)
    keys = jax.random.split(key, 3)
    state = {"key": key, "keys": keys, "w": jnp.ones((2,), jnp.float32)}
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(1, state, {})
        ck.wait()
        saved = ck._mngr.item_metadata(1)["state"].tree
        restored = ck.restore(_template(state))
    assert not [n for n in saved if n.startswith("leaf__")], sorted(saved)
    assert restored is not None
    for name in ("key", "keys"):
        got, want = restored.state[name], state[name]
        assert got.dtype == want.dtype and got.shape == want.shape
        assert str(jax.random.key_impl(got)) == impl
        assert got.sharding == want.sharding
        np.testing.assert_array_equal(jax.random.key_data(got), jax.random.key_data(want))
        # the same key: the same draws
        draw = jax.vmap(lambda k: jax.random.normal(k, (4,)))
        np.testing.assert_array_equal(
            np.asarray(draw(got.reshape(-1))), np.asarray(draw(want.reshape(-1)))
        )


def test_a_step_holding_its_key_as_an_item_of_its_own_still_restores(tmp_path, monkeypatch):
    from pipekit_train.jax import _packing

    state = _state()
    # what a version from before keys were packed wrote: the key as its own array item
    monkeypatch.setattr(_packing, "is_key", lambda x: False)
    real = _packing._packable
    monkeypatch.setattr(
        _packing,
        "_packable",
        lambda x: (
            not jax.dtypes.issubdtype(getattr(x, "dtype", np.float32), jax.dtypes.prng_key)
            and real(x)
        ),
    )
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(3, state, {})
        ck.wait()
        saved = ck._mngr.item_metadata(3)["state"].tree
    assert len([n for n in saved if n.startswith("leaf__")]) == 2, sorted(saved)
    monkeypatch.undo()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        restored = ck.restore(_template(state))
    assert restored is not None and restored.step == 3
    assert_state_equal(restored.state, state)


def test_a_numpy_template_gets_numpy_arrays_back(tmp_path):
    state = {
        "model": {"00000_kernel": np.arange(6, dtype=np.float32).reshape(2, 3)},
        "optimizer": {"00000_iterations": np.asarray(4, np.int64)},
    }
    template = jax.tree.map(np.zeros_like, state)
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(5, state, {})
        restored = ck.restore(template)
    assert restored is not None
    got = restored.state
    assert isinstance(got["model"]["00000_kernel"], np.ndarray)
    np.testing.assert_array_equal(got["model"]["00000_kernel"], state["model"]["00000_kernel"])
    assert got["optimizer"]["00000_iterations"].dtype == np.int64
    assert int(got["optimizer"]["00000_iterations"]) == 4


def test_read_state_gives_every_leaf_by_its_key_path_without_a_template(tmp_path):
    state = _state()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(2, state, {})
    got = read_state(tmp_path / "2")
    assert sorted(got) == ["b", "big", "opt.0", "opt.1.count", "rng", "scalar", "w"]
    for name, want in (("w", state["w"]), ("b", state["b"]), ("big", state["big"])):
        assert got[name].dtype == want.dtype
        np.testing.assert_array_equal(got[name], np.asarray(want))
    np.testing.assert_array_equal(got["rng"], np.asarray(jax.random.key_data(state["rng"])))


def test_a_trace_is_packed_too_and_comes_back_by_name(tmp_path):
    draws = 40
    trace = {
        "sample__mu": np.linspace(0, 1, draws, dtype=np.float32),
        "sample__tau": np.arange(draws * 3, dtype=np.float32).reshape(draws, 3),
        "diverging": np.zeros(draws, dtype=bool),
        "num_steps": np.arange(draws, dtype=np.int32),
    }
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(draws, _state(), {}, trace)
        ck.wait()
        saved = ck._mngr.item_metadata(draws)["trace"].tree
        restored = ck.restore(_template(_state()))
    assert sorted(saved) == ["packed__bool", "packed__float32", "packed__int32"]
    assert restored is not None and restored.trace is not None
    for got in (restored.trace, read_trace(tmp_path / str(draws))):
        assert sorted(got) == sorted(trace)
        for name, want in trace.items():
            assert got[name].dtype == want.dtype, name
            np.testing.assert_array_equal(got[name], want, err_msg=name)


def test_read_state_of_a_folder_that_is_no_step_is_a_checkpoint_error(tmp_path):
    with pytest.raises(CheckpointError, match="not a readable checkpoint step folder"):
        read_state(tmp_path)
    with pytest.raises(CheckpointError, match="not a readable checkpoint step folder"):
        read_trace(tmp_path / "7")
