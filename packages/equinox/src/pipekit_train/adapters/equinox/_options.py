"""``backend_options`` understood by the Equinox backend, declared as specs and checked by
core's one parser (``pipekit_train.engine.parse_backend_options``) before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    optimizer_id_option,
    parse_backend_options,
)

__all__ = ["EquinoxOptions", "parse_options", "OPTION_SPECS", "DEFAULT_STEPS_PER_CALL"]

DEFAULT_STEPS_PER_CALL = 50
"""Default fusion factor. Chosen by measurement (see docs/performance.md)."""

#: Every key the Equinox backend takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "steps_per_call",
        "int",
        DEFAULT_STEPS_PER_CALL,
        "steps fused into one compiled call (lax.scan); results equal 1 bit for bit",
        low=1,
    ),
    OptionSpec("worker_count", "int", 0, "Grain worker processes for the training data", low=0),
    RESUME_OPTION,
    compilation_cache_option(),
    OptionSpec("shuffle", "bool", True, "shuffle the training data each epoch"),
    OptionSpec("async_checkpointing", "bool", True, "write checkpoints in the background"),
    optimizer_id_option(),
)


@dataclass(frozen=True)
class EquinoxOptions:
    steps_per_call: int = DEFAULT_STEPS_PER_CALL
    worker_count: int = 0
    resume: str = "auto"
    compilation_cache: str | None = None
    shuffle: bool = True
    async_checkpointing: bool = True
    optimizer_id: str | None = None


def parse_options(options: dict[str, Any] | None) -> EquinoxOptions:
    """Check ``TrainingLoop.backend_options`` for the Equinox backend."""
    parsed = parse_backend_options(options, OPTION_SPECS, backend="equinox")
    return EquinoxOptions(**parsed.values)
