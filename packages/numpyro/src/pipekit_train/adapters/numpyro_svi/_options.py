"""``backend_options`` of the ``numpyro-svi`` backend, validated before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import parse_resume
from pipekit_train.errors import ConfigError, closest

__all__ = ["SviOptions", "parse_options"]

_KNOWN = {
    "steps_per_call": "SVI steps fused into one compiled call (int >= 1, default 50)",
    "worker_count": "Grain worker processes for the training data (int >= 0, default 0)",
    "shuffle": (
        "shuffle the rows each epoch when minibatching (bool, default True); a full batch "
        "(batch_size = the dataset's rows) is never shuffled"
    ),
    "resume": "'auto' (default), 'never' or 'force'",
    "x64": "compute in float64 (bool, default False)",
    "compilation_cache": "JAX persistent compilation cache folder, or None/'off'",
    "optimizer_id": "a name for your own optax object in optimizer_config, recorded by the "
    "resume guard (str, default None)",
    "num_data": "the dataset size N that scales each minibatch's likelihood (int >= 1); "
    "required with a streaming dataset, checked against map-style data",
}


@dataclass(frozen=True)
class SviOptions:
    steps_per_call: int = 50
    worker_count: int = 0
    shuffle: bool = True
    resume: str = "auto"
    x64: bool = False
    compilation_cache: Any = None
    optimizer_id: str | None = None
    num_data: int | None = None


def parse_options(options: dict[str, Any] | None) -> SviOptions:
    """Check ``backend_options`` for ``numpyro-svi`` (``ConfigError`` naming the key)."""
    options = dict(options or {})
    for key in options:
        if key not in _KNOWN:
            raise ConfigError(
                f"backend_options has unknown key {key!r} for the numpyro-svi backend"
                + closest(key, _KNOWN)
                + "; known: "
                + "; ".join(f"{k}: {v}" for k, v in _KNOWN.items()),
                field=f"backend_options.{key}",
            )
    out = SviOptions(**options)
    for name, low in (("steps_per_call", 1), ("worker_count", 0)):
        value = getattr(out, name)
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise ConfigError(
                f"backend_options.{name} must be an integer >= {low}, got {value!r}",
                field=f"backend_options.{name}",
            )
    for name in ("shuffle", "x64"):
        if not isinstance(getattr(out, name), bool):
            raise ConfigError(
                f"backend_options.{name} must be true or false", field=f"backend_options.{name}"
            )
    parse_resume(out.resume)
    value = out.optimizer_id
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(
            f"backend_options.optimizer_id must be a non-empty string naming your optax "
            f"object, got {value!r}",
            field="backend_options.optimizer_id",
        )
    return out
