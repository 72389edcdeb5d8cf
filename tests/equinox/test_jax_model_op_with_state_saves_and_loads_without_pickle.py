"""A ``JaxModelOp`` holding an ``eqx.nn.State`` saves it, without pickle, and loads it back.

``state.eqx`` holds the state's arrays (``eqx.tree_serialise_leaves``, .npy
records) beside ``weights.eqx``; ``op.json`` records both leaf summaries. Loading
takes the structure from ``like=`` — a ``(module, state)`` pair, a stateful op,
or a callable returning one — and the reloaded op predicts the same bits, in
inference mode with the saved statistics. A skeleton without a state for a save
with one (or a state of another shape) is a ``CheckpointError`` saying what to pass.
"""

from __future__ import annotations

import json

import equinox as eqx
import jax
import numpy as np
import pytest
from _eqx_helpers import make_data

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.errors import CheckpointError, ConfigError


class BNNet(eqx.Module):
    lin: eqx.nn.Linear
    bn: eqx.nn.BatchNorm

    def __init__(self, width: int = 3, *, key):
        self.lin = eqx.nn.Linear(4, width, key=key)
        self.bn = eqx.nn.BatchNorm(width, axis_name="batch", mode="ema")

    def __call__(self, x, state):
        return self.bn(self.lin(x), state)


def _pair(width: int = 3, seed: int = 0):
    model, state = eqx.nn.make_with_state(BNNet)(width, key=jax.random.PRNGKey(seed))
    # Non-default running statistics, so a reload that dropped them would show.
    x = make_data(32, seed=seed)["x"]
    _, state = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(x, state)
    return model, state


X = make_data(6, seed=9)["x"]


@pytest.mark.parametrize("like_form", ["pair", "op", "callable"])
def test_save_load_roundtrip_keeps_state_and_predictions(tmp_path, like_form):
    model, state = _pair()
    op = JaxModelOp(model, state=state)
    op.save(tmp_path / "m")
    skeleton = _pair(seed=1)
    like = {
        "pair": skeleton,
        "op": JaxModelOp(skeleton[0], state=skeleton[1]),
        "callable": lambda: skeleton,
    }[like_form]
    loaded = JaxModelOp.load(tmp_path / "m", like=like)
    for a, b in zip(
        jax.tree_util.tree_leaves(loaded.state), jax.tree_util.tree_leaves(state), strict=True
    ):
        assert np.asarray(a).tobytes() == np.asarray(b).tobytes()
    assert np.asarray(loaded(X)).tobytes() == np.asarray(op(X)).tobytes()


def test_saved_files_hold_no_pickle(tmp_path):
    model, state = _pair()
    JaxModelOp(model, state=state).save(tmp_path / "m")
    files = {p.name for p in (tmp_path / "m").iterdir()}
    assert files == {"weights.eqx", "state.eqx", "op.json"}
    for name in ("weights.eqx", "state.eqx"):
        data = (tmp_path / "m" / name).read_bytes()
        assert b"\x93NUMPY" in data and b"\x80\x04" not in data[:2]
    meta = json.loads((tmp_path / "m" / "op.json").read_text())
    assert meta["state_leaves"] and all("shape" in e for e in meta["state_leaves"])


def test_inference_uses_running_statistics_not_the_batch():
    model, state = _pair()
    op = JaxModelOp(model, state=state)
    one = np.asarray(op(X[:1]))
    assert np.allclose(one[0], np.asarray(op(X))[0], atol=1e-6)  # independent of the batch


def test_skeleton_without_state_or_of_other_shape_is_refused(tmp_path):
    model, state = _pair()
    JaxModelOp(model, state=state).save(tmp_path / "m")
    with pytest.raises(CheckpointError, match="model state"):
        JaxModelOp.load(tmp_path / "m", like=model)
    with pytest.raises(CheckpointError, match="first differing leaf"):
        JaxModelOp.load(tmp_path / "m", like=_pair(width=5))
    JaxModelOp.load(tmp_path / "m", like=_pair(width=3))  # same shapes: fine


def test_state_must_be_an_eqx_state():
    model, _ = _pair()
    with pytest.raises(ConfigError) as err:
        JaxModelOp(model, state={"mean": np.zeros(3)})
    assert err.value.field == "JaxModelOp.state"
