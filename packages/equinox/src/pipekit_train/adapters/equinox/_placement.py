"""Where arrays live: one device, or a ``ShardingSpec`` mesh (possibly multi-process)."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec


class Placement:
    """Puts state and batches on devices, and brings metrics back.

    Without a spec, arrays go to the default device and batches are handed to
    ``jit`` as NumPy arrays. With a spec, model and optimiser leaves are placed
    on ``model_sharding`` (scalars replicated), each batch on ``data_sharding``
    and a stack of ``k`` batches on the same spec with a leading unsharded
    axis. Under several processes each process holds its local slice of every
    batch and the global array is assembled with
    ``jax.make_array_from_process_local_data``.
    """

    def __init__(self, spec: Any = None) -> None:
        self.spec = spec
        self.multiprocess = spec is not None and jax.process_count() > 1
        if spec is not None:
            self._data = spec.data_sharding
            self._chunk = NamedSharding(spec.mesh, PartitionSpec(None, *tuple(spec.data_pspec)))
            self._replicated = NamedSharding(spec.mesh, PartitionSpec())

    def state(self, tree: Any) -> Any:
        """Place every array leaf of ``tree`` on the model sharding (scalars replicated)."""
        if self.spec is None:
            return tree

        def put(leaf: Any) -> Any:
            if not isinstance(leaf, jax.Array | np.ndarray):
                return leaf
            if np.ndim(leaf) == 0 or len(tuple(self.spec.model_pspec)) > np.ndim(leaf):
                sharding = self._replicated
            else:
                sharding = self.spec.model_sharding
            return jax.device_put(leaf, sharding)

        return jax.tree_util.tree_map(put, tree)

    def _put(self, batch: dict[str, np.ndarray], sharding: Any, batch_axis: int) -> Any:
        if self.spec is None:
            return batch
        if self.multiprocess:
            out = {}
            for key, local in batch.items():
                shape = list(np.shape(local))
                shape[batch_axis] *= jax.process_count()
                out[key] = jax.make_array_from_process_local_data(sharding, local, tuple(shape))
            return out
        return {key: jax.device_put(value, sharding) for key, value in batch.items()}

    def batch(self, batch: dict[str, np.ndarray]) -> Any:
        """One training batch on ``data_sharding``."""
        return self._put(batch, self._data if self.spec is not None else None, 0)

    def chunk(self, batches: dict[str, np.ndarray]) -> Any:
        """``k`` stacked batches, split along their batch axis (axis 1)."""
        return self._put(batches, self._chunk if self.spec is not None else None, 1)

    def replicated(self, batch: dict[str, np.ndarray]) -> Any:
        """An evaluation batch, whole on every device (each process holds all of it)."""
        if self.spec is None:
            return batch
        if self.multiprocess:
            return {
                key: jax.make_array_from_process_local_data(self._replicated, value)
                for key, value in batch.items()
            }
        return {key: jax.device_put(value, self._replicated) for key, value in batch.items()}

    def fetch(self, tree: Any) -> Any:
        """Bring device values to host NumPy (replicated values read from a local shard)."""

        def get(leaf: Any) -> Any:
            if isinstance(leaf, jax.Array) and not leaf.is_fully_addressable:
                return np.asarray(leaf.addressable_data(0))
            return leaf

        return jax.device_get(jax.tree_util.tree_map(get, tree))

    @property
    def replicated_sharding(self) -> Any:
        """The fully replicated ``NamedSharding`` over the mesh (``None`` without a spec)."""
        return self._replicated if self.spec is not None else None

    def describe(self) -> dict[str, Any] | None:
        return None if self.spec is None else self.spec.describe()
