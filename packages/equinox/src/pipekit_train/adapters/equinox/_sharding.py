"""Checks of a ``ShardingSpec`` against the loop, raised before any compilation.

Rules (see docs/scaling.md):

- ``batch_size`` is divisible by the process count and by the size of the data
  axis (the mesh axes named by the first entry of ``data_pspec``).
- Under several processes the data axis spans the processes and each process's
  devices hold one contiguous block of ``batch_size // process_count`` rows of
  every global batch (true for ``Mesh(jax.devices(), ...)``); the block's index
  is the slice of each global batch that process reads. The dataset must be
  indexable: a stream cannot be split deterministically across processes.
- ``model_pspec`` is applied uniformly: every model and optimiser array leaf of
  rank >= ``len(model_pspec)`` is split by it and must be divisible by it; leaves
  of lower rank (biases, scalars, counters) are replicated. A spec that fits no
  leaf at all is an error.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import numpy as np

from pipekit_train.errors import ConfigError


def _entry_size(spec: Any, entry: Any) -> int:
    if entry is None:
        return 1
    names = entry if isinstance(entry, tuple) else (entry,)
    size = 1
    for name in names:
        size *= int(spec.mesh.shape[name])
    return size


def _is_indexable(dataset: Any) -> bool:
    return isinstance(dataset, (dict, tuple)) or (
        hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")
    )


def validate_sharding(loop: Any, spec: Any, module: Any = None) -> int:
    """Check the batch layout of ``spec`` for ``loop``; return this process's data block.

    The block index ``r`` means this process's devices hold rows
    ``[r * B/P, (r + 1) * B/P)`` of each global batch of ``B`` rows over ``P``
    processes (``r == jax.process_index()`` for a process-major mesh).
    ``module`` is accepted for backward compatibility; model leaves are checked
    by :func:`validate_model_spec` once the optimiser state exists.
    """
    processes = jax.process_count()
    if processes > 1 and not _is_indexable(loop.dataset):
        raise ConfigError(
            f"TrainingLoop.dataset is a {type(loop.dataset).__name__}, a stream without "
            f"__len__/__getitem__; multi-process training ({processes} processes) needs an "
            "indexable dataset (a dict or tuple of arrays, an object with __len__ and "
            "__getitem__, or a grain.MapDataset) so that every process reads its own disjoint "
            "rows of each global batch and a resumed run continues the same data order",
            field="dataset",
        )
    if loop.batch_size % processes:
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) must be divisible by the number of "
            f"processes ({processes}): each process reads batch_size // {processes} rows of "
            "every global batch",
            field="batch_size",
        )
    axis = spec.data_axis_size
    if loop.batch_size % axis:
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) must be divisible by the size of "
            f"the data axis of sharding.data_pspec {spec.data_pspec} ({axis}); use a "
            f"multiple of {axis}",
            field="batch_size",
        )
    if processes == 1:
        return 0
    return _process_block(spec, loop.batch_size, processes)


def _process_block(spec: Any, batch_size: int, processes: int) -> int:
    """Which contiguous block of each global batch this process's devices hold."""
    if spec.data_axis_size % processes:
        raise ConfigError(
            f"sharding.data_pspec {spec.data_pspec} splits each batch {spec.data_axis_size} "
            f"ways, which does not spread it over the {processes} processes; with several "
            "processes the data axis must span them (e.g. Mesh(jax.devices(), ('data',)) with "
            "PartitionSpec('data'))",
            field="sharding.data_pspec",
        )
    local = batch_size // processes
    index_map = spec.data_sharding.addressable_devices_indices_map((batch_size,))
    rows: set[int] = set()
    for index in index_map.values():
        rows.update(range(batch_size)[index[0]])
    block = min(rows) // local if rows else -1
    if rows != set(range(block * local, (block + 1) * local)):
        raise ConfigError(
            f"sharding.mesh: the devices of process {jax.process_index()} hold rows "
            f"{sorted(rows)[:8]}… of each global batch of {batch_size}, not one contiguous "
            f"block of {local}; order the mesh's devices by process (e.g. "
            "Mesh(jax.devices(), ...), which lists each process's devices together)",
            field="sharding.mesh",
        )
    return block


def validate_model_spec(spec: Any, state: Any) -> None:
    """Every model/optimiser leaf the uniform ``model_pspec`` splits must divide evenly."""
    rank = len(tuple(spec.model_pspec))
    if not rank or all(_entry_size(spec, e) == 1 for e in tuple(spec.model_pspec)):
        return
    arrays = jax.tree_util.tree_leaves_with_path(eqx.filter(state, _has_shape))
    fitting = [(p, leaf) for p, leaf in arrays if np.ndim(leaf) >= rank]
    if not fitting:
        largest = max((np.ndim(leaf) for _, leaf in arrays), default=0)
        raise ConfigError(
            f"sharding.model_pspec {spec.model_pspec} has rank {rank}, but no model leaf has "
            f"rank >= {rank} (the largest has rank {largest}), so it would shard nothing; "
            f"use a spec of rank <= {largest} or PartitionSpec() to replicate",
            field="sharding.model_pspec",
        )
    for path, leaf in fitting:
        for dim, entry in enumerate(tuple(spec.model_pspec)):
            size = _entry_size(spec, entry)
            if leaf.shape[dim] % size:
                raise ConfigError(
                    f"sharding.model_pspec {spec.model_pspec} splits axis {dim} of leaf "
                    f"{_where(path)} (shape {tuple(leaf.shape)}) into {size} parts, which "
                    f"does not divide {leaf.shape[dim]}; change the spec, the mesh, or the "
                    "model's sizes",
                    field="sharding.model_pspec",
                )


def _has_shape(leaf: Any) -> bool:
    """An array, or an array's shape (the planned state's ``jax.ShapeDtypeStruct``)."""
    return eqx.is_array(leaf) or isinstance(leaf, jax.ShapeDtypeStruct)


def validate_batch_spec(spec: Any, batch: dict[str, Any], batch_size: int) -> None:
    """``data_pspec`` must fit every field of a (global) batch."""
    entries = tuple(spec.data_pspec)
    for key, value in batch.items():
        shape = (batch_size, *np.shape(value)[1:])
        if len(entries) > len(shape):
            raise ConfigError(
                f"sharding.data_pspec {spec.data_pspec} has rank {len(entries)}, but batch "
                f"field {key!r} has shape {shape}; use a spec of rank <= {len(shape)} "
                "(normally PartitionSpec('data'))",
                field="sharding.data_pspec",
            )
        for dim, entry in enumerate(entries[1:], start=1):
            size = _entry_size(spec, entry)
            if shape[dim] % size:
                raise ConfigError(
                    f"sharding.data_pspec {spec.data_pspec} splits axis {dim} of batch field "
                    f"{key!r} (shape {shape}) into {size} parts, which does not divide it",
                    field="sharding.data_pspec",
                )


def _where(path: Any) -> str:
    text = jax.tree_util.keystr(path)
    return f"TrainState{text}"
