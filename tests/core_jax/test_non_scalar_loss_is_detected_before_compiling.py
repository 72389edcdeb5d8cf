"""``check_scalar_loss`` traces the loss abstractly and rejects non-scalar results."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.jax.losses import check_scalar_loss, resolve_loss

PRED = jax.ShapeDtypeStruct((8, 1), jnp.float32)
TARGET = jax.ShapeDtypeStruct((8, 1), jnp.float32)


def check(fn, pred=PRED, target=TARGET):
    with pytest.raises(ConfigError) as info:
        check_scalar_loss(fn, pred, target)
    assert info.value.field == "TrainingLoop.loss"
    assert "TrainingLoop.loss" in str(info.value)
    return str(info.value)


def test_elementwise_loss_names_its_shape():
    message = check(lambda p, t: (p - t) ** 2)
    assert "shape (8, 1)" in message
    assert "scalar" in message


def test_per_example_loss_is_rejected():
    message = check(lambda p, t: jnp.sum((p - t) ** 2, axis=-1))
    assert "shape (8,)" in message


def test_tuple_result_is_rejected():
    assert "tuple" in check(lambda p, t: (jnp.mean(p), {"aux": 1}))


def test_integer_result_is_rejected():
    assert "floating-point" in check(lambda p, t: jnp.sum(p > t))


def test_error_inside_the_loss_is_reported_in_user_terms():
    message = check(lambda p, t: jnp.mean(p @ t))  # (8,1) @ (8,1) does not contract
    assert "failed on predictions (8, 1) float32" in message


def test_builtin_loss_shape_mismatch():
    message = check(
        resolve_loss("cross_entropy"),
        jax.ShapeDtypeStruct((8, 10), jnp.float32),
        jax.ShapeDtypeStruct((8, 3), jnp.int32),
    )
    assert "(8, 10)" in message and "(8, 3)" in message


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
def test_builtin_losses_pass(name, pred, target):
    check_scalar_loss(
        resolve_loss(name), jax.ShapeDtypeStruct(*pred), jax.ShapeDtypeStruct(*target)
    )


def test_concrete_arrays_are_accepted_as_shape_sources():
    check_scalar_loss(resolve_loss("mse"), np.zeros((4, 2), np.float32), jnp.zeros((4, 2)))


def test_nothing_is_executed():
    calls = []

    def loss(p, t):
        calls.append(type(p).__name__)
        return jnp.mean(p - t)

    check_scalar_loss(loss, PRED, TARGET)
    assert calls and all("Tracer" in name for name in calls)
