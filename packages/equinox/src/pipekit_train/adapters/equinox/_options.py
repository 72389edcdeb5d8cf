"""``backend_options`` understood by the Equinox backend, declared as specs and checked by
core's one parser (``pipekit_train.engine.parse_backend_options``) before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.adapters._equinox_options import DEFAULT_STEPS_PER_CALL, OPTION_SPECS
from pipekit_train.engine import parse_backend_options

__all__ = ["EquinoxOptions", "parse_options", "OPTION_SPECS", "DEFAULT_STEPS_PER_CALL"]


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
