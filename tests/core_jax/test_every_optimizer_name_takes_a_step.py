"""Every optimiser name resolves to optax and lowers a small quadratic."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest

from pipekit_train.jax.optim import resolve_optimizer
from pipekit_train.optimizers import OPTIMIZER_NAMES

TARGET = jnp.array([[1.0, -2.0, 3.0], [0.5, 0.0, -1.0]])


def quadratic(params):
    return jnp.sum((params["w"] - TARGET) ** 2) + jnp.sum((params["b"] - 1.0) ** 2)


def run_steps(transform, n=5):
    params = {"w": jnp.zeros((2, 3)), "b": jnp.zeros((3,))}
    state = transform.init(params)

    @jax.jit
    def step(p, s):
        grads = jax.grad(quadratic)(p)
        updates, s = transform.update(grads, s, p)
        return optax.apply_updates(p, updates), s

    losses = [float(quadratic(params))]
    for _ in range(n):
        params, state = step(params, state)
        losses.append(float(quadratic(params)))
    return losses


@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_optimizer_resolves_and_lowers_the_loss(name):
    transform = resolve_optimizer({"name": name, "lr": 0.05}, max_steps=10)
    losses = run_steps(transform)
    assert all(jnp.isfinite(jnp.asarray(losses)))
    assert losses[-1] < losses[0], losses


@pytest.mark.parametrize("name", OPTIMIZER_NAMES)
def test_optimizer_with_schedule_clip_norm_and_weight_decay_steps(name):
    config = {
        "name": name,
        "learning_rate": {"schedule": "cosine_decay", "init_value": 0.05},
        "clip_norm": 10.0,
        "weight_decay": 1e-4,
    }
    losses = run_steps(resolve_optimizer(config, max_steps=10))
    assert losses[-1] < losses[0], losses


def test_passthrough_kwargs_reach_the_optimizer():
    plain = run_steps(resolve_optimizer({"name": "sgd", "lr": 0.01}, max_steps=5))
    momentum = run_steps(
        resolve_optimizer(
            {"name": "sgd", "lr": 0.01, "momentum": 0.9, "nesterov": True}, max_steps=5
        )
    )
    assert momentum[-1] < plain[-1]
