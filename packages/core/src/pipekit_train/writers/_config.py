"""The loop's configuration and run facts as writers record them (params, tags, hparams).

``loop_config`` is the loop's YAML form (``TrainingLoop.to_dict``) when it has one;
a field holding a Python object with no YAML form (a model, arrays, a loss
function) is represented by its type name instead of failing, so a run started
from Python still records its configuration. ``flatten`` turns nested dicts into
the dotted keys that MLflow params and TensorBoard hparams need.
"""

from __future__ import annotations

import json
import math
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from ..errors import PipekitError

if TYPE_CHECKING:
    from ..loop import TrainingLoop

__all__ = ["loop_config", "flatten", "run_facts"]

Scalar = str | int | float | bool


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


def loop_config(loop: TrainingLoop) -> dict[str, Any]:
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


def _scalar(value: Any) -> Scalar:
    if isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if value is None:
        return "None"
    return json.dumps(value, default=str, sort_keys=True)


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Scalar]:
    """Nested dicts → ``{"optimizer_config.lr.init_value": 0.001, …}``.

    Lists and ``None`` become strings (JSON), since params and hparams hold only
    strings, numbers and booleans; an empty dict is kept as ``"{}"``.
    """
    out: dict[str, Scalar] = {}
    for key, value in tree.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, f"{name}."))
        elif isinstance(value, dict):
            out[name] = "{}"
        else:
            out[name] = _scalar(value)
    return out


def run_facts(loop: TrainingLoop) -> dict[str, Any]:
    """What core knows about a run at its start: backend, versions of pipekit and libraries.

    The backend module's ``library_versions()`` (when it has one) supplies the
    versions of the libraries it trains with. Nothing here raises: a fact that
    cannot be found is left out.
    """
    from ..registry import distribution_version, installed_backends

    facts: dict[str, Any] = {"backend": loop.backend}
    core = distribution_version("pipekit-train-core")
    if core:
        facts["pipekit-train-core"] = core
    for backend in installed_backends():
        if backend.name != loop.backend:
            continue
        if backend.distribution and backend.version:
            facts[backend.distribution] = backend.version
        import importlib

        try:
            module = importlib.import_module(backend.module)
            versions = getattr(module, "library_versions", None)
            if callable(versions):
                facts.update({str(k): str(v) for k, v in dict(versions()).items()})
        except Exception:  # a fact, not a reason to fail a run
            pass
    return facts
