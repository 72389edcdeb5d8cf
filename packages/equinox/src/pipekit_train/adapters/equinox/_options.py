"""``backend_options`` understood by the Equinox backend, validated before any compilation."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import parse_resume
from pipekit_train.errors import ConfigError, closest

DEFAULT_STEPS_PER_CALL = 50
"""Default fusion factor. Chosen by measurement (see docs/performance.md)."""

_KNOWN = {
    "steps_per_call": "steps fused into one compiled call (int >= 1, default 50)",
    "worker_count": "Grain worker processes for the training data (int >= 0, default 0)",
    "resume": "'auto' (default), 'never' or 'force'",
    "compilation_cache": "JAX persistent compilation cache folder, or None/'off'",
    "shuffle": "shuffle the training data each epoch (bool, default True)",
    "async_checkpointing": "write checkpoints in the background (bool, default True)",
    "optimizer_id": "a name for your own optax object in optimizer_config, recorded by the "
    "resume guard (str, default None)",
}


@dataclass(frozen=True)
class EquinoxOptions:
    steps_per_call: int = DEFAULT_STEPS_PER_CALL
    worker_count: int = 0
    resume: str = "auto"
    compilation_cache: str | None = None
    shuffle: bool = True
    async_checkpointing: bool = True
    optimizer_id: str | None = None


def parse_options(options: dict[str, Any]) -> EquinoxOptions:
    """Check ``TrainingLoop.backend_options`` for the Equinox backend."""
    for key in options:
        if key not in _KNOWN:
            raise ConfigError(
                f"backend_options has unknown key {key!r} for the equinox backend"
                + closest(key, _KNOWN)
                + "; known: "
                + "; ".join(f"{k}: {v}" for k, v in _KNOWN.items()),
                field=f"backend_options.{key}",
            )
    out = EquinoxOptions(**options)
    for name in ("steps_per_call", "worker_count"):
        value = getattr(out, name)
        minimum = 1 if name == "steps_per_call" else 0
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ConfigError(
                f"backend_options.{name} must be an integer >= {minimum}, got {value!r}",
                field=f"backend_options.{name}",
            )
    parse_resume(out.resume)
    cache = out.compilation_cache
    if cache is not None and not isinstance(cache, (str, os.PathLike)):
        raise ConfigError(
            "backend_options.compilation_cache must be a folder path, 'off' or None, got "
            f"{cache!r}",
            field="backend_options.compilation_cache",
        )
    for name in ("shuffle", "async_checkpointing"):
        if not isinstance(getattr(out, name), bool):
            raise ConfigError(
                f"backend_options.{name} must be true or false", field=f"backend_options.{name}"
            )
    check_optimizer_id(out.optimizer_id)
    return out


def check_optimizer_id(value: Any) -> None:
    """``backend_options.optimizer_id`` is ``None`` or a non-empty string."""
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigError(
            f"backend_options.optimizer_id must be a non-empty string naming your optax "
            f"object, got {value!r}",
            field="backend_options.optimizer_id",
        )
