"""The public `train_step` (the seed's `eqx.filter_jit` surface) drives a hand-written loop:
it lowers the loss, advances `TrainState.step`, reports `loss` and the live `lr`, leaves the
input state usable, and is deterministic in its key."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from _eqx_helpers import assert_bit_identical, make_data, make_module

from pipekit_train.adapters.equinox import SupervisedTask, TrainState, train_step
from pipekit_train.jax.losses import resolve_loss
from pipekit_train.jax.optim import resolve_optimizer

DATA = make_data(96)
TASK = SupervisedTask(loss=resolve_loss("cross_entropy"), classification="cross_entropy")
OPT = resolve_optimizer({"name": "adam", "lr": 1e-2}, max_steps=60)


def _batches(n_steps: int, batch_size: int = 32):
    for s in range(n_steps):
        lo = (s * batch_size) % len(DATA["x"])
        yield {k: jnp.asarray(v[lo : lo + batch_size]) for k, v in DATA.items()}


def _train(n_steps: int) -> tuple[TrainState, list[float], TrainState, dict]:
    start = TrainState.create(make_module(), OPT)
    state, losses, metrics = start, [], {}
    base = jax.random.PRNGKey(0)
    for s, batch in enumerate(_batches(n_steps)):
        state, metrics = train_step(state, batch, jax.random.fold_in(base, s), TASK, OPT)
        losses.append(float(metrics["loss"]))
    return state, losses, start, metrics


def test_a_hand_written_loop_learns() -> None:
    state, losses, start, metrics = _train(60)
    assert int(state.step) == 60
    assert np.mean(losses[-5:]) < 0.6 * np.mean(losses[:5]), losses
    assert set(metrics) >= {"loss", "lr"} and float(metrics["lr"]) == np.float32(1e-2)
    # The input state was not donated: it still holds the initial parameters and runs.
    assert int(start.step) == 0
    assert_bit_identical(start.model, make_module())
    train_step(start, next(_batches(1)), jax.random.PRNGKey(1), TASK, OPT)


def test_same_keys_and_batches_give_the_same_bits() -> None:
    a, *_ = _train(10)
    b, *_ = _train(10)
    assert_bit_identical(a.model, b.model)
