"""`save_state` / `restore_state` keep a `TrainState` in a real Orbax `CheckpointManager`: the
restored state equals the saved one leaf for leaf (model, optimiser state, step), and training
on from it gives the same bits as training on from the original."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import orbax.checkpoint as ocp
from _eqx_helpers import assert_bit_identical, make_data, make_module

from pipekit_train.adapters.equinox import (
    SupervisedTask,
    TrainState,
    restore_state,
    save_state,
    train_step,
)
from pipekit_train.jax.losses import resolve_loss
from pipekit_train.jax.optim import resolve_optimizer

DATA = {k: jnp.asarray(v) for k, v in make_data(32).items()}
TASK = SupervisedTask(loss=resolve_loss("cross_entropy"), classification="cross_entropy")
OPT = resolve_optimizer({"name": "adamw", "lr": 1e-2}, max_steps=20)


def _steps(state: TrainState, first: int, n: int) -> TrainState:
    for s in range(first, first + n):
        state, _ = train_step(state, DATA, jax.random.fold_in(jax.random.PRNGKey(0), s), TASK, OPT)
    return state


def test_roundtrip_and_resume_give_identical_bits(tmp_path) -> None:
    state3 = _steps(TrainState.create(make_module(), OPT), 0, 3)
    state5 = _steps(state3, 3, 2)
    options = ocp.CheckpointManagerOptions(max_to_keep=5)
    with ocp.CheckpointManager(tmp_path, options=options) as mngr:
        save_state(mngr, state3, 3)
        save_state(mngr, state5, 5)
        mngr.wait_until_finished()
        assert mngr.all_steps() == [3, 5]

    template = TrainState.create(make_module(seed=7), OPT)  # other values, same structure
    with ocp.CheckpointManager(tmp_path) as mngr:
        restored3 = restore_state(mngr, template, 3)
        restored5 = restore_state(mngr, template, 5)
    assert int(restored3.step) == 3 and int(restored5.step) == 5
    assert_bit_identical(restored3.model, state3.model)
    assert_bit_identical(restored5.model, state5.model)
    for a, b in zip(
        jax.tree.leaves(restored3.opt_state), jax.tree.leaves(state3.opt_state), strict=True
    ):
        assert jnp.array_equal(a, b)
    assert_bit_identical(_steps(restored3, 3, 2).model, state5.model)
