"""``backend_options`` of the ``numpyro-svi`` backend, declared as specs and checked by core's
one parser before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.adapters._numpyro_svi_options import OPTION_SPECS
from pipekit_train.engine import (
    parse_backend_options,
)

__all__ = ["SviOptions", "parse_options", "OPTION_SPECS"]


@dataclass(frozen=True)
class SviOptions:
    steps_per_call: int = 50
    worker_count: int = 0
    shuffle: bool = True
    resume: str = "auto"
    x64: bool = False
    init: str = "compiled"
    compilation_cache: Any = None
    optimizer_id: str | None = None
    num_data: int | None = None


def parse_options(options: dict[str, Any] | None) -> SviOptions:
    """Check ``backend_options`` for ``numpyro-svi`` (``ConfigError`` naming the key)."""
    return SviOptions(**parse_backend_options(options, OPTION_SPECS, backend="numpyro-svi").values)
