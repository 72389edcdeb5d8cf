"""``TrainState``: the Equinox-side training state."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import optax


class TrainState(eqx.Module):
    """Equinox-side training state, stored in ``TrainerCarryState.opt_state``.

    A nested-state design: ``TrainerCarryState`` (the carry every backend
    shares) holds an opaque ``opt_state``; for the Equinox backend that is a
    ``TrainState``. JAX-specific pytree concerns stay here, carrier-agnostic
    ones in core.

    ``step`` is a scalar ``int32`` array (not a Python int) so that advancing
    it does not retrigger compilation; it is replicated under sharding.
    Only the inexact-array leaves of ``model`` are trained (``opt_state`` is
    built over ``eqx.filter(model, eqx.is_inexact_array)``); integer arrays and
    non-array fields ride along unchanged.

    ``model_state`` is the ``eqx.nn.State`` of a stateful model (batch-norm
    statistics; ``None`` otherwise) and ``ema`` the moving average of the trained
    leaves when ``TrainingLoop.ema_decay`` is set (``None`` otherwise). Both are
    array leaves of the carry, so they are checkpointed and restored with it; at
    their ``None`` defaults the carry is exactly the stateless one.
    """

    model: Any
    opt_state: Any
    step: jax.Array
    model_state: Any = None
    ema: Any = None

    @staticmethod
    def create(
        model: eqx.Module,
        optimizer: optax.GradientTransformation,
        model_state: Any = None,
        *,
        ema: bool = False,
    ) -> TrainState:
        """A fresh state at step 0 with ``optimizer`` initialised on ``model``'s parameters.

        With ``ema=True`` the average starts as a copy of the parameters.
        """
        params = eqx.filter(model, eqx.is_inexact_array)
        opt_state = optimizer.init(params)
        average = jax.tree_util.tree_map(jnp.copy, params) if ema else None
        return TrainState(
            model=model,
            opt_state=opt_state,
            step=jnp.zeros((), jnp.int32),
            model_state=model_state,
            ema=average,
        )
