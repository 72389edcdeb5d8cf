"""One optimisation step, in the public ``filter_jit`` form and the driver's fused form."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import optax

from pipekit_train.jax.optim import current_learning_rate

from ._state import TrainState
from ._task import TrainTask


def step_impl(
    state: TrainState,
    batch: Any,
    key: jax.Array,
    task: TrainTask,
    optimizer: optax.GradientTransformation,
) -> tuple[TrainState, dict[str, jax.Array]]:
    """The math of one step, shared by ``train_step`` and the driver's compiled chunk."""
    params, static = eqx.partition(state.model, eqx.is_inexact_array)

    def loss_of(p: Any) -> tuple[jax.Array, dict[str, jax.Array]]:
        return task.loss_fn(eqx.combine(p, static), batch, key)

    (loss, aux), grads = jax.value_and_grad(loss_of, has_aux=True)(params)
    updates, opt_state = optimizer.update(grads, state.opt_state, params)
    params = optax.apply_updates(params, updates)
    metrics = {"loss": loss, **aux}
    lr = current_learning_rate(state.opt_state)
    if lr is not None:
        metrics["lr"] = lr
    new_state = TrainState(
        model=eqx.combine(params, static), opt_state=opt_state, step=state.step + 1
    )
    return new_state, metrics


@eqx.filter_jit
def train_step(
    state: TrainState,
    batch: Any,
    key: jax.Array,
    task: TrainTask,
    optimizer: optax.GradientTransformation,
) -> tuple[TrainState, dict[str, jax.Array]]:
    """One Equinox optimisation step under ``eqx.filter_jit``.

    ``key`` is the step's key; the driver passes ``fold_in(base_key, step)``.
    Returns the new state and the step's metrics (``loss``, the task's aux
    metrics and, when the optimiser exposes it, the live ``lr``).
    """
    return step_impl(state, batch, key, task, optimizer)
