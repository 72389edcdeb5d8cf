"""One optimisation step, in the public ``filter_jit`` form and the driver's fused form.

With :class:`StepFeatures` at its defaults the step is exactly the plain one
(same traced computation, same bits). The features add, each only when on:

- a stateful model: the task takes and returns ``state.model_state``;
- ``accumulate_steps = k > 1``: the batch holds ``k * batch_size`` rows, viewed
  as ``k`` micro-batches (row ``i * k + j`` is row ``i`` of micro-batch ``j``, so
  under data parallelism each device keeps its own rows); a ``lax.scan`` runs
  the optimiser (an ``optax.MultiSteps``) once per micro-batch, which applies one
  averaged update at the ``k``-th; the model state threads through the
  micro-batches; logged metrics are the micro-batch means;
- ``precision``: the casts of :mod:`pipekit_train.jax.precision` inside the loss;
- ``ema_decay``: the moving average updated after the optimiser update.

The optimiser's update gets the step's loss as ``value=`` (``optimizer_update``), as
optax's own examples pass it to ``reduce_on_plateau`` and other extra-args
transformations; one that ignores it computes the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from pipekit_train.jax.ema import ema_update
from pipekit_train.jax.optim import current_learning_rate, optimizer_update
from pipekit_train.jax.precision import cast_floating, cast_like, compute_dtype

from ._state import TrainState
from ._task import TrainTask


@dataclass(frozen=True)
class StepFeatures:
    """The ``TrainingLoop`` feature fields the compiled step honours (static, hashable)."""

    accumulate_steps: int = 1
    ema_decay: float | None = None
    precision: str = "float32"

    @classmethod
    def of(cls, loop: Any) -> StepFeatures:
        return cls(
            accumulate_steps=loop.accumulate_steps,
            ema_decay=loop.ema_decay,
            precision=loop.precision,
        )


DEFAULT_FEATURES = StepFeatures()


def _grads(
    params: Any,
    static: Any,
    model_state: Any,
    batch: Any,
    key: jax.Array,
    task: TrainTask,
    precision: str,
) -> tuple[jax.Array, dict[str, jax.Array], Any, Any]:
    """``(loss, metrics, new_model_state, grads)`` of one (micro-)batch."""
    dtype = compute_dtype(precision)
    call: Any = task.loss_fn  # stateless or stateful signature (see TrainTask)
    if model_state is None and dtype is None:

        def loss_of(p: Any) -> tuple[jax.Array, dict[str, jax.Array]]:
            return task.loss_fn(eqx.combine(p, static), batch, key)

        (loss, aux), grads = jax.value_and_grad(loss_of, has_aux=True)(params)
        return loss, aux, None, grads

    def loss_of_features(p: Any) -> tuple[jax.Array, tuple[dict[str, jax.Array], Any]]:
        model = eqx.combine(cast_floating(p, dtype), static)
        b = cast_floating(batch, dtype)
        if model_state is None:
            loss, aux = task.loss_fn(model, b, key)
            new_state = None
        else:
            loss, (aux, new_state) = call(model, cast_floating(model_state, dtype), b, key)
            new_state = cast_like(new_state, model_state)
        if dtype is not None:
            loss = loss.astype(jnp.float32)
            aux = {k: jnp.asarray(v).astype(jnp.float32) for k, v in aux.items()}
        return loss, (aux, new_state)

    (loss, (aux, new_state)), grads = jax.value_and_grad(loss_of_features, has_aux=True)(params)
    return loss, aux, new_state, grads


def _micro_batches(batch: Any, k: int) -> Any:
    """``(k * B, …)`` arrays → ``(k, B, …)``: row ``i * k + j`` → micro-batch ``j``, row ``i``."""

    def split(v: Any) -> Any:
        v = jnp.asarray(v)
        return jnp.swapaxes(v.reshape(v.shape[0] // k, k, *v.shape[1:]), 0, 1)

    return jax.tree_util.tree_map(split, batch)


def _keep_dtypes(opt_state: Any, old: Any, precision: str) -> Any:
    """Under ``bfloat16`` the float32 hyper-parameters promote the moments; cast them back."""
    return cast_like(opt_state, old) if precision == "bfloat16" else opt_state


def step_impl(
    state: TrainState,
    batch: Any,
    key: jax.Array,
    task: TrainTask,
    optimizer: optax.GradientTransformation,
    features: StepFeatures = DEFAULT_FEATURES,
) -> tuple[TrainState, dict[str, jax.Array]]:
    """The math of one step, shared by ``train_step`` and the driver's compiled chunk."""
    params, static = eqx.partition(state.model, eqx.is_inexact_array)
    k = features.accumulate_steps
    if k == 1:
        loss, aux, model_state, grads = _grads(
            params, static, state.model_state, batch, key, task, features.precision
        )
        updates, opt_state = optimizer_update(optimizer, grads, state.opt_state, params, value=loss)
        opt_state = _keep_dtypes(opt_state, state.opt_state, features.precision)
        params = optax.apply_updates(params, updates)
        metrics = {"loss": loss, **aux}
    else:

        def micro(
            c: tuple[Any, Any, Any], xs: tuple[Any, jax.Array]
        ) -> tuple[tuple[Any, Any, Any], Any]:
            p, o, ms = c
            mb, j = xs
            loss, aux, ms, grads = _grads(
                p, static, ms, mb, jax.random.fold_in(key, j), task, features.precision
            )
            updates, new_o = optimizer_update(optimizer, grads, o, p, value=loss)
            o = _keep_dtypes(new_o, o, features.precision)
            return (optax.apply_updates(p, updates), o, ms), {"loss": loss, **aux}

        (params, opt_state, model_state), per_micro = jax.lax.scan(
            micro,
            (params, state.opt_state, state.model_state),
            (_micro_batches(batch, k), jnp.arange(k, dtype=jnp.int32)),
        )
        metrics = jax.tree_util.tree_map(lambda v: jnp.mean(v, axis=0), per_micro)
    lr = current_learning_rate(state.opt_state)
    if lr is not None:
        metrics["lr"] = lr
    ema = state.ema
    if features.ema_decay is not None and ema is not None:
        ema = ema_update(ema, params, features.ema_decay)
    new_state = TrainState(
        model=eqx.combine(params, static),
        opt_state=opt_state,
        step=state.step + 1,
        model_state=model_state,
        ema=ema,
    )
    return new_state, metrics


@eqx.filter_jit
def train_step(
    state: TrainState,
    batch: Any,
    key: jax.Array,
    task: TrainTask,
    optimizer: optax.GradientTransformation,
    features: StepFeatures = DEFAULT_FEATURES,
) -> tuple[TrainState, dict[str, jax.Array]]:
    """One Equinox optimisation step under ``eqx.filter_jit``.

    ``key`` is the step's key; the driver passes ``fold_in(base_key, step)``.
    Returns the new state and the step's metrics (``loss``, the task's aux
    metrics and, when the optimiser exposes it, the live ``lr``). ``features``
    carries ``TrainingLoop``'s ``accumulate_steps`` / ``ema_decay`` /
    ``precision`` (``StepFeatures.of(loop)``); ``optimizer`` must then already be
    wrapped for accumulation (``pipekit_train.jax.optim.with_accumulation``).
    """
    return step_impl(state, batch, key, task, optimizer, features)
