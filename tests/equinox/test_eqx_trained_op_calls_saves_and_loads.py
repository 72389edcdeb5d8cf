"""The trained artifact: a ``JaxModelOp`` that maps a batch, exposes ``.module``, saves and loads.

``make_model`` in ``_eqx_helpers`` records itself as the op's factory (as
``examples/digits_mlp.py`` does), so ``JaxModelOp.load(path, trusted=True)`` needs no
skeleton (the folder is the test's own, so trusting it is right).
"""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np
from _eqx_helpers import (
    FACTORY,
    assert_bit_identical,
    leaves,
    make_data,
    make_model,
    make_module,
    run_loop,
    tiny_loop,
)

from pipekit_train.adapters.equinox import JaxModelOp

X = make_data(10, seed=5)["x"]


@eqx.filter_jit
def _apply(module, x):
    return jax.vmap(module)(x)


def _vmapped(module, x):
    return np.asarray(_apply(module, x))


def test_op_maps_a_batch_like_the_vmapped_module(tmp_path):
    initial = make_model()
    op, _ = run_loop(tiny_loop(model_op=initial))
    assert isinstance(op, JaxModelOp)
    assert isinstance(op.module, eqx.nn.MLP)
    out = np.asarray(op(X))
    assert out.shape == (10, 3)
    np.testing.assert_allclose(out, _vmapped(op.module, X), rtol=1e-6, atol=1e-6)
    # It is the trained module, not the initial one ...
    assert not all(np.array_equal(a, b) for a, b in zip(leaves(op), leaves(initial), strict=True))


def test_the_users_model_survives_training_and_the_loop_runs_twice():
    """The step donates its buffers; the model the user passed in must not be among them."""
    initial = make_model()
    loop = tiny_loop(model_op=initial)
    first, _ = run_loop(loop)
    assert_bit_identical(initial, make_model())  # untouched and still readable
    np.asarray(initial(X))
    second, _ = run_loop(loop)
    assert_bit_identical(first, second)


def test_save_then_load_by_the_recorded_factory(tmp_path):
    op, _ = run_loop(tiny_loop(model_op=make_model(width=6)))
    assert op.factory == FACTORY and op.factory_kwargs["width"] == 6
    op.save(tmp_path / "model")
    loaded = JaxModelOp.load(tmp_path / "model", trusted=True)
    assert_bit_identical(loaded, op)
    assert np.array_equal(np.asarray(loaded(X)), np.asarray(op(X)))


def test_bare_module_comes_back_as_a_jax_model_op(tmp_path):
    module = make_module()
    op, _ = run_loop(tiny_loop(model_op=module))
    assert type(op) is JaxModelOp
    assert type(op.module) is type(module)
    np.testing.assert_allclose(np.asarray(op(X)), _vmapped(op.module, X), rtol=1e-6, atol=1e-6)
    # No factory was recorded, so loading needs the structure.
    op.save(tmp_path / "bare")
    loaded = JaxModelOp.load(tmp_path / "bare", like=make_module)
    assert np.array_equal(np.asarray(loaded(X)), np.asarray(op(X)))


def test_same_seed_same_op_different_seed_different_op():
    a, _ = run_loop(tiny_loop(seed=3))
    b, _ = run_loop(tiny_loop(seed=3))
    c, _ = run_loop(tiny_loop(seed=4))
    assert_bit_identical(a, b)
    assert not all(np.array_equal(x, y) for x, y in zip(leaves(a), leaves(c), strict=True))
