"""Plain dicts as writers record them: ``flatten`` turns nested dicts into the dotted
keys that MLflow params and tags and TensorBoard hparams need.

Writers receive plain dicts (the loop's configuration, the run's facts) from their
caller, ``LogToExperiment`` (``pipekit_train._run_facts`` builds them), and import
nothing of the loop, the registry or the adapters.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["flatten"]

Scalar = str | int | float | bool


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
