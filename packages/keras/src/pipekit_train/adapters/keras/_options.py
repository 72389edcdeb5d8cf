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

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    parse_backend_options,
    require_instances,
)

__all__ = ["KerasOptions", "parse_options", "KNOWN_OPTIONS", "OPTION_SPECS"]


def _keras_callbacks(value: Any) -> tuple[Any, ...]:
    """Every entry a ``keras.callbacks.Callback`` (pipekit's own go in ``callbacks``)."""
    if not value:
        return ()
    import keras

    return tuple(
        require_instances(
            value,
            keras.callbacks.Callback,
            key="callbacks",
            what="keras.callbacks.Callback",
            hint="pipekit callbacks go in TrainingLoop.callbacks",
        )
    )


#: Every key the keras backend takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "steps_per_execution",
        "int",
        1,
        "Keras' own: steps per call of its jitted train function (a Python loop over one "
        "step); passed to compile",
        low=1,
        what="a positive integer",
    ),
    RESUME_OPTION,
    OptionSpec("async_checkpointing", "bool", True, "Orbax writes in the background"),
    OptionSpec(
        "data_parallel",
        "bool",
        False,
        "train under keras.distribution.DataParallel over all JAX devices",
    ),
    compilation_cache_option(),
    OptionSpec(
        "callbacks",
        "list",
        (),
        "Keras callbacks run by fit beside pipekit's",
        optional=True,
        check=_keras_callbacks,
        what="a list of keras.callbacks.Callback",
    ),
)
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
