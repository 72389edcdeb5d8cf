"""``inject_hyperparams`` puts the live learning rate in the opt state."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest

from pipekit_train.jax.optim import current_learning_rate, resolve_optimizer


def linear(step):  # the schedule used below, by hand
    return 1.0 - 0.9 * min(step, 10) / 10


@pytest.mark.parametrize(
    "extra",
    [{}, {"clip_norm": 1.0}, {"clip_norm": 1.0, "weight_decay": 0.1}],
    ids=["bare", "clip", "clip+decay"],
)
def test_lr_follows_the_schedule_step_by_step(extra):
    config = {
        "name": "adam",
        "lr": {"schedule": "linear", "init_value": 1.0, "end_value": 0.1, "transition_steps": 10},
        **extra,
    }
    transform = resolve_optimizer(config, max_steps=20)
    params = {"w": jnp.ones((3,))}
    state = transform.init(params)
    assert float(current_learning_rate(state)) == pytest.approx(linear(0))

    @jax.jit
    def step(p, s):
        updates, s = transform.update(p, s, p)
        return optax.apply_updates(p, updates), s, current_learning_rate(s)

    for k in range(1, 15):
        params, state, lr_in_jit = step(params, state)
        # after k updates the state holds the rate the k-th update used: schedule(k - 1)
        assert float(current_learning_rate(state)) == pytest.approx(linear(k - 1), rel=1e-6)
        assert float(lr_in_jit) == pytest.approx(linear(k - 1), rel=1e-6)


def test_constant_lr_is_readable():
    transform = resolve_optimizer({"name": "sgd", "lr": 0.25}, max_steps=5)
    state = transform.init({"w": jnp.zeros(2)})
    assert float(current_learning_rate(state)) == pytest.approx(0.25)


def test_lr_is_found_inside_a_larger_pytree():
    transform = resolve_optimizer({"name": "adamw", "lr": 0.5, "clip_norm": 2.0}, max_steps=5)
    state = transform.init({"w": jnp.zeros(2)})
    holder = {"step": 3, "opt": [None, state]}
    assert float(current_learning_rate(holder)) == pytest.approx(0.5)


def test_state_without_injected_hyperparams_gives_none():
    state = optax.adam(1e-3).init({"w": jnp.zeros(2)})
    assert current_learning_rate(state) is None
    assert current_learning_rate(None) is None
