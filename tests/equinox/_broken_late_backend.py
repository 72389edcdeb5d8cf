"""Broken on purpose (``_broken_backends``): Equinox that checks its options after training."""

from __future__ import annotations

import dataclasses
from typing import Any

from _broken_backends import as_equinox

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError


def run(loop: TrainingLoop) -> tuple[Any, dict[str, Any]]:
    """Train with the options Equinox knows, then refuse the unknown ones."""
    from pipekit_train.adapters.equinox import run as run_equinox
    from pipekit_train.adapters.equinox._options import OPTION_SPECS

    known = {spec.name for spec in OPTION_SPECS}
    unknown = sorted(set(loop.backend_options) - known)
    kept = {k: v for k, v in loop.backend_options.items() if k in known}
    result = run_equinox(dataclasses.replace(as_equinox(loop), backend_options=kept))
    if unknown:
        raise ConfigError(f"unknown backend_options {unknown}", field="backend_options")
    return result
