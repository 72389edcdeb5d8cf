"""The driver's compiled step for Equinox: a ``StepProgram``.

The public ``train_step`` is an ``eqx.filter_jit`` function; this hot path
compiles the same ``step_impl`` differently for speed: ``jax.jit`` over the
array leaves only (the static part of the state is closed over, so no pytree
filtering per call), with the carry's buffers donated, and ``lax.scan`` over
``k`` stacked batches when the driver fuses ``k`` steps. Step ``s`` always uses
``fold_in(base_key, s)`` so fused and unfused runs give the same bits.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax

from pipekit_train.jax.data import eval_batches

from ._placement import Placement
from ._state import TrainState
from ._step import step_impl


class EquinoxProgram:
    """Compiled training/eval functions over a partitioned ``TrainState``."""

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
    ) -> None:
        dynamic, static = eqx.partition(state, eqx.is_array)
        # The carry's buffers are donated to the compiled step. Its model leaves are
        # the caller's own arrays (the user's model_op), so start from copies: the
        # user's model must stay usable after training (and a loop can run twice).
        self.initial_carry = jax.tree_util.tree_map(
            lambda x: (
                jax.device_put(x, x.sharding, may_alias=False) if isinstance(x, jax.Array) else x
            ),
            dynamic,
        )
        self._static = static
        self._treedef = jax.tree_util.tree_structure(dynamic)
        self._task = task
        self._val_data = val_data
        self._eval_batch_size = eval_batch_size
        self._eval_key = eval_key
        self._placement = placement
        self.base_key = base_key

        def one(dyn: Any, batch: Any, key: jax.Array) -> tuple[Any, dict[str, jax.Array]]:
            st = eqx.combine(dyn, static)
            new, metrics = step_impl(st, batch, jax.random.fold_in(key, st.step), task, optimizer)
            return eqx.filter(new, eqx.is_array), metrics

        def chunk(dyn: Any, batches: Any, key: jax.Array) -> tuple[Any, dict[str, jax.Array]]:
            return jax.lax.scan(lambda d, b: one(d, b, key), dyn, batches)

        out_shardings: Any = None
        if placement.spec is not None:
            # Pin the carry's layout: left free, XLA may hand back a leaf the uniform
            # model_pspec replicates (a bias) split along a mesh axis, which would change
            # the next call's input shardings (a recompile) and the checkpoint layout.
            carry_shardings = jax.tree_util.tree_map(lambda x: x.sharding, self.initial_carry)
            out_shardings = (carry_shardings, placement.replicated_sharding)
        self._one = jax.jit(one, donate_argnums=0, out_shardings=out_shardings)
        self._chunk = jax.jit(chunk, donate_argnums=0, out_shardings=out_shardings)

        eval_fn = getattr(task, "eval_fn", None)
        if eval_fn is None:

            def eval_fn(model: Any, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
                loss, aux = task.loss_fn(model, batch, key)
                return {"loss": loss, **aux}

        def evaluate(dyn: Any, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
            model = eqx.nn.inference_mode(eqx.combine(dyn, static).model)
            return eval_fn(model, batch, key)

        self._eval = jax.jit(evaluate)

    # -- StepProgram -------------------------------------------------------------------------
    def train_chunk(
        self, carry: Any, batches: Any, step: int, num_steps: int
    ) -> tuple[Any, dict[str, Any]]:
        if num_steps == 1:
            batch = self._placement.batch({k: v[0] for k, v in batches.items()})
            return self._one(carry, batch, self.base_key)
        return self._chunk(carry, self._placement.chunk(batches), self.base_key)

    def evaluate(self, carry: Any) -> dict[str, float]:
        totals: dict[str, float] = {}
        count = 0
        for batch in eval_batches(self._val_data, self._eval_batch_size):
            n = int(np.shape(batch["x"])[0])
            out = self._placement.fetch(
                self._eval(carry, self._placement.replicated(batch), self._eval_key)
            )
            for name, value in out.items():
                totals[name] = totals.get(name, 0.0) + float(value) * n
            count += n
        return {name: total / count for name, total in totals.items()}

    def fetch(self, tree: Any) -> Any:
        return self._placement.fetch(tree)

    def checkpoint_state(self, carry: Any) -> dict[str, Any]:
        leaves = jax.tree_util.tree_leaves(carry)
        # Copies: the next compiled call donates the carry's buffers while an
        # asynchronous save may still be reading them.
        return {f"{i:05d}": jnp.copy(leaf) for i, leaf in enumerate(leaves)}

    def checkpoint_template(self, carry: Any) -> dict[str, Any]:
        leaves = jax.tree_util.tree_leaves(carry)
        return {
            f"{i:05d}": jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
            for i, leaf in enumerate(leaves)
        }

    def carry_from_checkpoint(self, state: dict[str, Any]) -> Any:
        leaves = [state[key] for key in sorted(state)]
        return jax.tree_util.tree_unflatten(self._treedef, leaves)

    def state_of(self, carry: Any) -> TrainState:
        """The full ``TrainState`` for a carry."""
        state: TrainState = eqx.combine(carry, self._static)
        return state
