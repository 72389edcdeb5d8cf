"""``save_state`` / ``restore_state``: a ``TrainState`` in an Orbax ``CheckpointManager``.

The driver checkpoints through ``pipekit_train.jax.checkpoint`` (state, data
iterator and metadata in one composite); these two functions are the plain
building blocks for users who drive their own loop with ``train_step``. Orbax is imported
when one is called, not with the backend: a run without ``checkpoint_dir`` never loads it
(~0.11 s of a cold Equinox run's imports).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import equinox as eqx
import jax

from ._state import TrainState

if TYPE_CHECKING:
    import orbax.checkpoint as ocp


def _arrays(state: TrainState) -> dict[str, Any]:
    leaves = jax.tree_util.tree_leaves(eqx.filter(state, eqx.is_array))
    return {f"{i:05d}": leaf for i, leaf in enumerate(leaves)}


def save_state(mngr: ocp.CheckpointManager, state: TrainState, step: int) -> None:
    """Save ``state``'s arrays as ``step`` (asynchronously if the manager is async)."""
    import orbax.checkpoint as ocp

    mngr.save(step, args=ocp.args.Composite(state=ocp.args.StandardSave(_arrays(state))))


def restore_state(mngr: ocp.CheckpointManager, template: TrainState, step: int) -> TrainState:
    """Restore ``step`` into the structure (and shardings) of ``template``."""
    import orbax.checkpoint as ocp

    dynamic, static = eqx.partition(template, eqx.is_array)
    abstract = {
        key: jax.ShapeDtypeStruct(leaf.shape, leaf.dtype, sharding=leaf.sharding)
        for key, leaf in _arrays(template).items()
    }
    restored = mngr.restore(
        step, args=ocp.args.Composite(state=ocp.args.StandardRestore(abstract))
    )["state"]
    leaves = [restored[key] for key in sorted(restored)]
    treedef = jax.tree_util.tree_structure(dynamic)
    state: TrainState = eqx.combine(jax.tree_util.tree_unflatten(treedef, leaves), static)
    return state
