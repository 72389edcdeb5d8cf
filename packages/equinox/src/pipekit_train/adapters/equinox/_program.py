"""The driver's compiled step for Equinox: ``step_impl`` through core's program builder.

Everything about fusion (the ``lax.scan`` over ``k`` steps, ``fold_in(key, s)``,
donation, the flat-leaf carry, the sharding pins, checkpoint conversion) is
core's :mod:`pipekit_train.jax.program`. What is Equinox's own is here: the
carry is the array part of the ``TrainState`` (the static part is closed over),
and evaluation runs the model in inference mode over the validation set — the
EMA weights when ``ema_decay`` is set (a schedule-free optimiser's evaluation
parameters when it has one), with the trained model state for a stateful model, in
the compute precision of training.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import numpy as np
import optax

from pipekit_train.engine import eval_batches
from pipekit_train.jax.optim import schedule_free_state
from pipekit_train.jax.precision import cast_floating, compute_dtype
from pipekit_train.jax.program import Program

from ._placement import Placement
from ._state import TrainState
from ._step import DEFAULT_FEATURES, StepFeatures, step_impl


def deployed_model(state: TrainState) -> Any:
    """The model training hands on: its EMA weights when an average is kept.

    With a schedule-free optimiser (``optax.contrib.schedule_free_adamw`` …) it is the
    evaluation sequence, ``optax.contrib.schedule_free_eval_params(state, params)``, as
    optax documents (``ema_decay`` with one is refused before compiling).
    """
    if state.ema is None:
        free = schedule_free_state(state.opt_state)
        if free is None:
            return state.model
        params, static = eqx.partition(state.model, eqx.is_inexact_array)
        return eqx.combine(optax.contrib.schedule_free_eval_params(free, params), static)
    rest = eqx.filter(state.model, eqx.is_inexact_array, inverse=True)
    return eqx.combine(state.ema, rest)


def evaluation_step(task: Any, static: Any, *, stateful: bool, precision: str) -> Any:
    """``evaluate(dyn, batch, key) -> {name: float32 scalar}`` of one validation batch.

    The model in inference mode (its EMA weights when kept), in the compute precision
    of training; the task's ``eval_fn``, or its loss and aux metrics. Shared by the
    solo program and the population (which vmaps it over members).
    """
    eval_fn: Any = getattr(task, "eval_fn", None)
    if eval_fn is None and stateful:

        def stateful_eval(model: Any, ms: Any, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
            loss, (aux, _) = task.loss_fn(model, ms, batch, key)
            return {"loss": loss, **aux}

        eval_fn = stateful_eval

    elif eval_fn is None:

        def plain_eval(model: Any, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
            loss, aux = task.loss_fn(model, batch, key)
            return {"loss": loss, **aux}

        eval_fn = plain_eval

    dtype = compute_dtype(precision)

    def evaluate(dyn: Any, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
        current = eqx.combine(dyn, static)
        model = eqx.nn.inference_mode(cast_floating(deployed_model(current), dtype))
        batch = cast_floating(batch, dtype)
        if stateful:
            out = eval_fn(model, cast_floating(current.model_state, dtype), batch, key)
        else:
            out = eval_fn(model, batch, key)
        return jax.tree_util.tree_map(lambda v: v.astype(np.float32), out)

    return evaluate


class EquinoxProgram(Program):
    """Compiled training/eval functions over the array leaves of a ``TrainState``."""

    def __init__(
        self,
        state: TrainState,
        task: Any,
        optimizer: optax.GradientTransformation,
        *,
        base_key: jax.Array,
        eval_key: jax.Array,
        val_data: Any,
        eval_batch_size: int,
        placement: Placement,
        features: StepFeatures = DEFAULT_FEATURES,
    ) -> None:
        dynamic, static = eqx.partition(state, eqx.is_array)
        self._static = static
        self._task = task
        self._val_data = val_data
        self._eval_batch_size = eval_batch_size
        self._eval_key = eval_key
        self._placement = placement

        def step(dyn: Any, batch: Any, key: jax.Array) -> tuple[Any, dict[str, jax.Array]]:
            new, metrics = step_impl(
                eqx.combine(dyn, static), batch, key, task, optimizer, features
            )
            return eqx.filter(new, eqx.is_array), metrics

        carry_shardings: Any = None
        if placement.spec is not None:
            # Pin the carry's layout: left free, XLA may hand back a leaf the uniform
            # model_pspec replicates (a bias) split along a mesh axis, which would change
            # the next call's input shardings (a recompile) and the checkpoint layout.
            carry_shardings = jax.tree_util.tree_map(lambda x: x.sharding, dynamic)

        evaluate = evaluation_step(
            task, static, stateful=state.model_state is not None, precision=features.precision
        )
        self._eval = jax.jit(evaluate)
        super().__init__(
            step,
            dynamic,
            base_key=base_key,
            phases=None,
            phase_steps=None,
            evaluate=self._evaluate_on_val,
            fetch=placement.fetch,
            place_batch=placement.batch,
            place_chunk=placement.chunk,
            carry_shardings=carry_shardings,
            output_sharding=placement.replicated_sharding if placement.spec is not None else None,
            donate=True,
            fixed_chunk=None,
        )

    def _evaluate_on_val(self, dyn: Any) -> dict[str, float]:
        totals: dict[str, float] = {}
        count = 0
        for batch in eval_batches(self._val_data, self._eval_batch_size):
            n = int(np.shape(batch["x"])[0])
            out = self._placement.fetch(
                self._eval(dyn, self._placement.replicated(batch), self._eval_key)
            )
            for name, value in out.items():
                totals[name] = totals.get(name, 0.0) + float(value) * n
            count += n
        return {name: total / count for name, total in totals.items()}

    def state_of(self, carry: Any) -> TrainState:
        """The full ``TrainState`` for a carry."""
        state: TrainState = eqx.combine(self.tree(carry), self._static)
        return state
