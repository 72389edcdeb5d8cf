"""Checks of a ``ShardingSpec`` against the loop, raised before any compilation."""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax

from pipekit_train.errors import ConfigError


def validate_sharding(loop: Any, spec: Any, module: Any) -> None:
    """Batch divisibility by the data axis and by the process count; model spec ranks."""
    axis = spec.data_axis_size
    if loop.batch_size % axis:
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) must be divisible by the size of "
            f"the data axis of sharding.data_pspec ({axis}); use a multiple of {axis}",
            field="batch_size",
        )
    if loop.batch_size % jax.process_count():
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) must be divisible by the number of "
            f"processes ({jax.process_count()})",
            field="batch_size",
        )
    rank = len(tuple(spec.model_pspec))
    if rank:
        for path, leaf in jax.tree_util.tree_leaves_with_path(eqx.filter(module, eqx.is_array)):
            if leaf.ndim and leaf.ndim < rank:
                raise ConfigError(
                    f"sharding.model_pspec {spec.model_pspec} has rank {rank}, but model leaf "
                    f"{jax.tree_util.keystr(path)} has shape {leaf.shape}; use a spec of rank "
                    f"<= {leaf.ndim} or PartitionSpec() to replicate",
                    field="sharding.model_pspec",
                )
            for dim, entry in enumerate(tuple(spec.model_pspec)):
                if entry is None:
                    continue
                names = entry if isinstance(entry, tuple) else (entry,)
                size = 1
                for name in names:
                    size *= int(spec.mesh.shape[name])
                if leaf.ndim and leaf.shape[dim] % size:
                    raise ConfigError(
                        f"sharding.model_pspec splits axis {dim} of model leaf "
                        f"{jax.tree_util.keystr(path)} (shape {leaf.shape}) into {size} parts, "
                        "which does not divide it",
                        field="sharding.model_pspec",
                    )
