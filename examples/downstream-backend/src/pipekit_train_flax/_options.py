"""``TrainingLoop.backend_options`` of the flax-nnx backend, checked by core's one parser.

Every refusal is core's ``ConfigError`` naming ``backend_options.<key>`` (an unknown key
with the closest known one), raised by :func:`parse_options` before anything compiles.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import parse_backend_options

from ._backend_options import DEFAULT_STEPS_PER_CALL, OPTION_SPECS

__all__ = ["NnxOptions", "parse_options"]

BACKEND = "flax-nnx"


@dataclass(frozen=True)
class NnxOptions:
    """The checked options, one attribute per :data:`OPTION_SPECS` key."""

    steps_per_call: int = DEFAULT_STEPS_PER_CALL
    resume: str = "auto"
    compilation_cache: str | None = None
    shuffle: bool = True
    async_checkpointing: bool = True
    optimizer_id: str | None = None


def parse_options(options: dict[str, Any] | None) -> NnxOptions:
    """Check ``TrainingLoop.backend_options`` for the flax-nnx backend."""
    parsed = parse_backend_options(options, OPTION_SPECS, backend=BACKEND)
    return NnxOptions(**parsed.values)
