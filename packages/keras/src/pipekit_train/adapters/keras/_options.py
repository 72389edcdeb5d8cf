"""``TrainingLoop.backend_options`` understood by the keras backend."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pipekit_train.engine import parse_resume
from pipekit_train.errors import ConfigError, closest

__all__ = ["KerasOptions", "parse_options", "KNOWN_OPTIONS"]

KNOWN_OPTIONS = (
    "steps_per_execution",
    "resume",
    "async_checkpointing",
    "data_parallel",
    "compilation_cache",
    "callbacks",
)


@dataclass(frozen=True)
class KerasOptions:
    """``steps_per_execution``: Keras' own (a Python loop over one jitted step);
    ``resume``: ``auto``/``never``/``force`` (see docs/checkpointing.md);
    ``async_checkpointing``: Orbax writes in the background; ``data_parallel``:
    train under ``keras.distribution.DataParallel`` over all JAX devices;
    ``compilation_cache``: a folder for JAX's persistent compilation cache (Keras
    compiles through JAX), or ``None``/``"off"``; the CLI sets it."""

    steps_per_execution: int = 1
    resume: str = "auto"
    async_checkpointing: bool = True
    data_parallel: bool = False
    compilation_cache: str | None = None
    callbacks: tuple[Any, ...] = ()


def parse_options(options: Mapping[str, Any]) -> KerasOptions:
    """Validate ``backend_options``; unknown keys and bad values are ``ConfigError``."""
    for key in options:
        if key not in KNOWN_OPTIONS:
            raise ConfigError(
                f"backend_options.{key} is not an option of the keras backend"
                f"{closest(key, KNOWN_OPTIONS)}; known: {', '.join(KNOWN_OPTIONS)}",
                field=f"backend_options.{key}",
            )
    k = options.get("steps_per_execution", 1)
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ConfigError(
            f"backend_options.steps_per_execution must be a positive integer, got {k!r}",
            field="backend_options.steps_per_execution",
        )
    resume = options.get("resume", "auto")
    parse_resume(resume)
    for flag in ("async_checkpointing", "data_parallel"):
        if flag in options and not isinstance(options[flag], bool):
            raise ConfigError(
                f"backend_options.{flag} must be true or false, got {options[flag]!r}",
                field=f"backend_options.{flag}",
            )
    cache = options.get("compilation_cache")
    if cache is not None and not isinstance(cache, str):
        raise ConfigError(
            f"backend_options.compilation_cache must be a folder path or 'off', got {cache!r}",
            field="backend_options.compilation_cache",
        )
    callbacks = options.get("callbacks") or ()
    if not isinstance(callbacks, (list, tuple)):
        raise ConfigError(
            f"backend_options.callbacks must be a list of keras.callbacks.Callback, got "
            f"{type(callbacks).__name__}",
            field="backend_options.callbacks",
        )
    return KerasOptions(
        callbacks=tuple(callbacks),
        compilation_cache=cache,
        steps_per_execution=k,
        resume=resume,
        async_checkpointing=options.get("async_checkpointing", True),
        data_parallel=options.get("data_parallel", False),
    )
