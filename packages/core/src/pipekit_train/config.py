"""YAML ⇄ ``TrainingLoop``.

Only ``yaml.safe_load`` / ``yaml.safe_dump`` are used. Objects (model, datasets,
task, custom callbacks, a custom loss) appear in YAML as ``'module:attr'``
import strings of factories, or ``{factory: 'module:attr', kwargs: {…}}``.
Relative imports resolve against the YAML file's folder and the working
directory. Built-in callbacks are written ``{EarlyStopping: {patience: 3}}``.

The conversion itself is ``pipekit_train._loop_yaml`` (below the loop, which uses it for
``to_yaml`` / ``from_yaml``); this module is its face for ``TrainingLoop``.
"""

from __future__ import annotations

import os
from typing import Any

from . import _loop_yaml
from .loop import TrainingLoop

__all__ = ["loop_to_dict", "loop_to_yaml", "loop_from_yaml", "loop_from_dict", "apply_overrides"]


def _field_names() -> list[str]:
    """``TrainingLoop``'s field names, in order."""
    return _loop_yaml.field_names(TrainingLoop)


def _field_default(name: str) -> Any:
    """The default value of ``TrainingLoop.<name>`` (a fresh copy for mutable defaults)."""
    return _loop_yaml.field_default(TrainingLoop, name)


def loop_to_dict(loop: TrainingLoop) -> dict[str, Any]:
    """The YAML-able mapping of ``loop``; raises ``ConfigError`` naming a field with no form."""
    return _loop_yaml.to_dict(loop)


def loop_to_yaml(loop: TrainingLoop) -> str:
    """``loop`` as YAML text."""
    return _loop_yaml.to_yaml(loop)


def loop_from_dict(data: Any, search_path: tuple[str, ...] = ()) -> TrainingLoop:
    """Build a ``TrainingLoop`` from a mapping; unknown keys are ``ConfigError``s."""
    loop: TrainingLoop = _loop_yaml.from_dict(TrainingLoop, data, search_path)
    return loop


def loop_from_yaml(path_or_text: str | os.PathLike[str]) -> TrainingLoop:
    """Parse a YAML file (by path) or YAML text into a ``TrainingLoop``."""
    return TrainingLoop.from_yaml(path_or_text)


def _read(path_or_text: str | os.PathLike[str]) -> tuple[str, tuple[str, ...]]:
    """``(YAML text, import search path)`` of a file path or of YAML text."""
    return _loop_yaml.read_source(path_or_text)


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply CLI ``--set field=value`` (dotted fields allowed; values parsed as YAML)."""
    return _loop_yaml.apply_overrides(TrainingLoop, data, overrides)
