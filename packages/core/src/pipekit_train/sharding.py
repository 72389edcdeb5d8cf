"""``ShardingSpec``: how model and data are laid out over a device mesh.

JAX is imported only when a sharding is built, so ``import pipekit_train``
stays JAX-free. Data parallelism is ``model_pspec=PartitionSpec()`` (replicate)
and ``data_pspec=PartitionSpec("data")`` (split each batch along its leading
axis); a non-empty ``model_pspec`` applies the same spec to every model and
optimiser leaf whose rank allows it ("uniform model-parallel").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ConfigError

__all__ = ["ShardingSpec"]


@dataclass(frozen=True)
class ShardingSpec:
    """A mesh plus the partition specs of model leaves and of batches.

    Attributes:
        mesh: a ``jax.sharding.Mesh`` (over local devices, or all processes'
            devices under ``jax.distributed``).
        model_pspec: ``PartitionSpec`` for every model / optimiser array leaf.
        data_pspec: ``PartitionSpec`` for every batch array (leading axis = batch).
    """

    mesh: Any
    model_pspec: Any
    data_pspec: Any

    def __post_init__(self) -> None:
        from jax.sharding import Mesh, PartitionSpec

        if not isinstance(self.mesh, Mesh):
            raise ConfigError(
                f"ShardingSpec.mesh must be a jax.sharding.Mesh, got {type(self.mesh).__name__}",
                field="sharding.mesh",
            )
        for name in ("model_pspec", "data_pspec"):
            value = getattr(self, name)
            if not isinstance(value, PartitionSpec):
                raise ConfigError(
                    f"ShardingSpec.{name} must be a jax.sharding.PartitionSpec, got {value!r}",
                    field=f"sharding.{name}",
                )
        axes = set(self.mesh.axis_names)
        for name in ("model_pspec", "data_pspec"):
            for axis in _axis_names(getattr(self, name)):
                if axis not in axes:
                    raise ConfigError(
                        f"ShardingSpec.{name} names mesh axis {axis!r}, but the mesh only has "
                        f"axes {tuple(self.mesh.axis_names)}; build the Mesh with "
                        f"axis_names including {axis!r} or change the spec",
                        field=f"sharding.{name}",
                    )

    @property
    def model_sharding(self) -> Any:
        """``NamedSharding(mesh, model_pspec)``."""
        from jax.sharding import NamedSharding

        return NamedSharding(self.mesh, self.model_pspec)

    @property
    def data_sharding(self) -> Any:
        """``NamedSharding(mesh, data_pspec)``."""
        from jax.sharding import NamedSharding

        return NamedSharding(self.mesh, self.data_pspec)

    @property
    def data_axis_size(self) -> int:
        """How many ways a batch's leading axis is split."""
        spec = tuple(self.data_pspec)
        if not spec or spec[0] is None:
            return 1
        first = spec[0] if isinstance(spec[0], tuple) else (spec[0],)
        size = 1
        for axis in first:
            size *= int(self.mesh.shape[axis])
        return size

    def describe(self) -> dict[str, Any]:
        """JSON-able summary for ``backend_info["sharding"]``."""
        return {
            "mesh_shape": {str(k): int(v) for k, v in self.mesh.shape.items()},
            "model_pspec": repr(self.model_pspec),
            "data_pspec": repr(self.data_pspec),
            "num_devices": int(self.mesh.devices.size),
        }


def _axis_names(pspec: Any) -> list[str]:
    names: list[str] = []
    for entry in tuple(pspec):
        if entry is None:
            continue
        if isinstance(entry, tuple):
            names.extend(str(e) for e in entry)
        else:
            names.append(str(entry))
    return names
