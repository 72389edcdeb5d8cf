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
    """

    model: Any
    opt_state: Any
    step: jax.Array

    @staticmethod
    def create(model: eqx.Module, optimizer: optax.GradientTransformation) -> TrainState:
        """A fresh state at step 0 with ``optimizer`` initialised on ``model``'s parameters."""
        opt_state = optimizer.init(eqx.filter(model, eqx.is_inexact_array))
        return TrainState(model=model, opt_state=opt_state, step=jnp.zeros((), jnp.int32))
