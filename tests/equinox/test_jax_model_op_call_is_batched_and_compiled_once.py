"""``op(inputs)`` vmaps the module over the batch, accepts NumPy, and compiles once."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.errors import ConfigError, DataError

TRACES: list[tuple[int, ...]] = []


class Counting(eqx.Module):
    linear: eqx.nn.Linear

    def __call__(self, x):
        TRACES.append(x.shape)  # runs only while tracing
        return jnp.tanh(self.linear(x))


def test_numpy_and_jax_inputs_match_a_manual_vmap():
    module = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.key(0))
    op = JaxModelOp(module)
    x = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)
    expected = jax.vmap(module)(jnp.asarray(x))
    assert np.allclose(op(x), expected, rtol=1e-6, atol=1e-6)
    assert np.allclose(op(jnp.asarray(x)), expected, rtol=1e-6, atol=1e-6)
    assert op(x).shape == (6, 2)


def test_compiled_once_per_input_shape():
    TRACES.clear()
    op = JaxModelOp(Counting(eqx.nn.Linear(3, 2, key=jax.random.key(0))))
    x = np.ones((4, 3), np.float32)
    first = op(x)
    for _ in range(3):
        assert np.array_equal(op(x + 0), first)
    assert len(TRACES) == 1
    op(np.ones((5, 3), np.float32))  # a new batch size is a new signature
    assert len(TRACES) == 2


def test_pytree_inputs():
    class TwoInputs(eqx.Module):
        def __call__(self, batch):
            return batch["a"] * 2 + batch["b"]

    op = JaxModelOp(TwoInputs())
    out = op({"a": np.arange(3.0), "b": np.ones(3)})
    assert np.allclose(out, [1.0, 3.0, 5.0])


def test_runs_in_inference_mode():
    class WithDropout(eqx.Module):
        dropout: eqx.nn.Dropout

        def __call__(self, x):
            return self.dropout(x)  # no key: only valid in inference mode

    op = JaxModelOp(WithDropout(eqx.nn.Dropout(0.5)))
    x = np.ones((4, 3), np.float32)
    assert np.array_equal(op(x), x)
    assert op.module.dropout.inference is False  # the wrapped module is untouched


def test_unbatched_input_is_a_data_error():
    op = JaxModelOp(eqx.nn.Linear(3, 2, key=jax.random.key(0)))
    with pytest.raises(DataError, match="batch"):
        op(np.float32(1.0))


def test_wrong_feature_size_is_a_data_error():
    op = JaxModelOp(eqx.nn.Linear(3, 2, key=jax.random.key(0)))
    with pytest.raises(DataError, match=r"\(4, 5\)"):
        op(np.ones((4, 5), np.float32))


def test_non_equinox_module_is_rejected():
    with pytest.raises(ConfigError) as info:
        JaxModelOp(lambda x: x)
    assert info.value.field == "JaxModelOp.module"


def test_with_module_keeps_class_and_factory():
    op = JaxModelOp(
        eqx.nn.Linear(3, 2, key=jax.random.key(0)), factory="m:f", factory_kwargs={"n": 1}
    )
    other = op.with_module(eqx.nn.Linear(3, 2, key=jax.random.key(1)))
    assert type(other) is JaxModelOp and other.factory == "m:f" and other.factory_kwargs == {"n": 1}
    assert other.module is not op.module
