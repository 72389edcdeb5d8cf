"""``backend_options`` of the ``numpyro-svi`` backend, declared as specs and checked by core's
one parser before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    num_data_option,
    optimizer_id_option,
    parse_backend_options,
)

__all__ = ["SviOptions", "parse_options", "OPTION_SPECS"]

#: Every key numpyro-svi takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("steps_per_call", "int", 50, "SVI steps fused into one compiled call", low=1),
    OptionSpec("worker_count", "int", 0, "Grain worker processes for the training data", low=0),
    OptionSpec(
        "shuffle",
        "bool",
        True,
        "shuffle the rows each epoch when minibatching; a full batch (batch_size = the "
        "dataset's rows) is never shuffled",
    ),
    RESUME_OPTION,
    OptionSpec("x64", "bool", False, "compute in float64"),
    compilation_cache_option(),
    optimizer_id_option(),
    num_data_option(),
)


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
    return SviOptions(**parse_backend_options(options, OPTION_SPECS, backend="numpyro-svi").values)
