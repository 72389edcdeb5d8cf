"""The built-in losses check shapes when traced (`jax.eval_shape`, nothing compiled): mismatched
predictions and targets are a ConfigError naming `TrainingLoop.loss` and both shapes, and the
accepted shape pairs (including `(B, 1)` against `(B,)`) give a float scalar."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.jax.losses import resolve_loss


def _trace(name: str, pred: tuple, target: tuple):
    return jax.eval_shape(
        resolve_loss(name), jax.ShapeDtypeStruct(*pred), jax.ShapeDtypeStruct(*target)
    )


def test_mismatched_shapes_name_the_field_and_both_shapes() -> None:
    with pytest.raises(ConfigError) as info:
        _trace("cross_entropy", ((8, 10), jnp.float32), ((8, 3), jnp.int32))
    assert info.value.field == "TrainingLoop.loss"
    assert "(8, 10)" in str(info.value) and "(8, 3)" in str(info.value)


@pytest.mark.parametrize(
    ("name", "pred", "target"),
    [
        ("cross_entropy", ((8, 10), jnp.float32), ((8,), jnp.int32)),
        ("cross_entropy", ((8, 10), jnp.float32), ((8, 10), jnp.float32)),
        ("binary_cross_entropy", ((8, 1), jnp.float32), ((8,), jnp.int32)),
        ("mse", ((8, 1), jnp.float32), ((8,), jnp.float32)),
        ("mae", ((8, 3), jnp.float32), ((8, 3), jnp.float32)),
        ("huber", ((8,), jnp.float32), ((8, 1), jnp.float32)),
    ],
)
def test_accepted_shapes_give_a_float_scalar(name: str, pred: tuple, target: tuple) -> None:
    out = _trace(name, pred, target)
    assert out.shape == () and jnp.issubdtype(out.dtype, jnp.floating)
