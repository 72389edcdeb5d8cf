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
        compiled: bool = True,
    ) -> TrainState:
        """A fresh state at step 0 with ``optimizer`` initialised on ``model``'s parameters.

        With ``ema=True`` the average starts as a copy of the parameters. ``compiled``:
        the optimiser's state is built by one compiled program (``_fresh``); a population
        passes False, as its members' optimisers differ and each would compile its own,
        where eager operations compile once for all members.
        """
        params = eqx.filter(model, eqx.is_inexact_array)
        opt_state, average, step = _fresh(optimizer, params, ema, compiled=compiled)
        return TrainState(
            model=model,
            opt_state=opt_state,
            step=step,
            model_state=model_state,
            ema=average,
        )

    @staticmethod
    def planned(
        model: eqx.Module,
        optimizer: optax.GradientTransformation,
        model_state: Any = None,
        *,
        ema: bool = False,
    ) -> TrainState:
        """The state :meth:`create` will build, its optimiser state as shapes only
        (``jax.ShapeDtypeStruct`` leaves; traced, nothing run or compiled).

        What the run's checks read (the model, its state, the optimiser state's structure
        and leaf shapes) before anything is compiled, so a user's mistake is refused before
        :meth:`create`'s compiled program; the average stands as the parameters.
        """
        params = eqx.filter(model, eqx.is_inexact_array)
        return TrainState(
            model=model,
            opt_state=_abstract_init(optimizer, params),
            step=jax.ShapeDtypeStruct((), jnp.int32),  # type: ignore[arg-type]
            model_state=model_state,
            ema=params if ema else None,
        )


def _abstract_init(optimizer: optax.GradientTransformation, params: Any) -> Any:
    """The optimiser state's shapes and structure (``jax.eval_shape``: traced, not run), or
    the state itself for an ``init`` that cannot be traced (it reads its arguments' values)."""
    try:
        return jax.eval_shape(optimizer.init, params)
    except Exception:  # noqa: BLE001 - the eager call raises what is the user's to see
        return optimizer.init(params)


def _fresh(
    optimizer: optax.GradientTransformation, params: Any, ema: bool, *, compiled: bool
) -> tuple[Any, Any, jax.Array]:
    """``optimizer.init(params)``, the average's copy of ``params`` and the step counter, as
    one compiled program.

    Run eagerly, an optax ``init`` compiles one small program per operation and leaf shape
    (each ``zeros_like`` a ``broadcast_in_dim`` of its own): ~0.17 s of a cold run's start on
    the digits MLP with AdamW, against ~0.06 s for the one program. ``eqx.filter_jit`` keeps
    what is not an array (a Python number or object in the state) as the init returned it.
    An ``init`` that cannot be traced (it reads its arguments' values) runs eagerly, as
    before, and raises its own error if it has one.
    """

    def fresh(params: Any) -> tuple[Any, Any, jax.Array]:
        average = jax.tree_util.tree_map(jnp.copy, params) if ema else None
        return optimizer.init(params), average, jnp.zeros((), jnp.int32)

    if not compiled:
        return fresh(params)
    try:
        return eqx.filter_jit(fresh)(params)
    except Exception:  # noqa: BLE001 - the eager call raises what is the user's to see
        return fresh(params)
