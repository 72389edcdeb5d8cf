"""``TrainingLoop.backend_options`` understood by the keras backend, declared as specs and
checked by core's one parser before Keras compiles or fits anything.

``steps_per_execution`` goes to ``model.compile`` and ``callbacks`` to ``model.fit``; both
are checked here (a callback that is not a ``keras.callbacks.Callback`` is refused by its
index), so Keras never sees a value it would refuse mid-run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipekit_train.adapters._keras_options import OPTION_SPECS
from pipekit_train.engine import (
    parse_backend_options,
)

__all__ = ["KerasOptions", "parse_options", "KNOWN_OPTIONS", "OPTION_SPECS"]


KNOWN_OPTIONS = tuple(s.name for s in OPTION_SPECS)


@dataclass(frozen=True)
class KerasOptions:
    """The parsed options; each one's meaning is its spec's ``doc`` (``OPTION_SPECS``)."""

    steps_per_execution: int = 1
    resume: str = "auto"
    async_checkpointing: bool = True
    data_parallel: bool = False
    compilation_cache: str | None = None
    callbacks: tuple[Any, ...] = ()


def parse_options(options: Mapping[str, Any] | None) -> KerasOptions:
    """Validate ``backend_options``; unknown keys and bad values are ``ConfigError``."""
    values = parse_backend_options(options, OPTION_SPECS, backend="keras").values
    return KerasOptions(**{**values, "callbacks": tuple(values["callbacks"] or ())})
