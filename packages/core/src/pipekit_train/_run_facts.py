"""What ``LogToExperiment`` hands its writer: the loop's configuration and the run's facts.

Both are plain dicts built here, from the loop and the registry, so the writers
(``pipekit_train.writers``) import nothing of the loop, the registry or the adapters.

``loop_config`` is the loop's YAML form (``TrainingLoop.to_dict``) when it has one; a
field holding a Python object with no YAML form (a model, arrays, a loss function) is
represented by its type name instead of failing, so a run started from Python still
records its configuration. ``run_facts`` is what is known at the start: the backend and
the versions in ``backend_info``'s shape (``{"versions": {distribution: version}}``).
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .errors import PipekitError

if TYPE_CHECKING:
    from .protocols import LoopView

__all__ = ["loop_config", "run_facts"]


def _type_name(value: Any) -> str:
    name = getattr(value, "__qualname__", None) if callable(value) else None
    return f"<{name or type(value).__name__}>"


def _describe(value: Any) -> Any:
    """A YAML-safe description of ``value`` (type names for opaque objects)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_describe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _describe(v) for k, v in value.items()}
    to_config = getattr(value, "to_config", None)
    if callable(to_config):
        try:
            return _describe(to_config())
        except PipekitError:
            pass
    return _type_name(value)


def loop_config(loop: LoopView) -> dict[str, Any]:
    """``loop.to_dict()``, or per field the YAML form or the type name of its object."""
    try:
        return loop.to_dict()
    except PipekitError:
        pass
    out: dict[str, Any] = {}
    for f in fields(loop):
        value = getattr(loop, f.name)
        if f.name == "loss" and callable(value):
            out[f.name] = _type_name(value)
        else:
            out[f.name] = _describe(value)
    return out


def run_facts(loop: LoopView) -> dict[str, Any]:
    """The backend and the versions of what it runs on, read from metadata (nothing raises:
    a version that cannot be found is left out)."""
    from .registry import distribution_versions, installed_backends

    facts: dict[str, Any] = {"backend": loop.backend}
    for backend in installed_backends():
        if backend.name == loop.backend and backend.distribution:
            facts["versions"] = distribution_versions(backend.distribution)
    return facts
