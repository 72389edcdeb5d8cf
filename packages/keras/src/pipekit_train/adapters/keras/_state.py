"""The training state as numpy arrays: every model and optimiser variable.

Bit-identical resume needs *all* of ``model.variables`` (weights, batch-norm
statistics and the ``SeedGenerator`` state of ``Dropout`` & co. — which ``.keras``
and ``.weights.h5`` files do not store) and all of ``model.optimizer.variables``
(``iterations``, moments), plus the data position, which is the step, and the state
of the compiled metrics (``compile(metrics=[...])``: running totals and counts), so a
resumed run's metric rows continue the uninterrupted run's (``fit`` resets them when
its epoch begins: :func:`restore_metrics` puts them back after that). The arrays
are copied to host numpy (Keras donates its device buffers to the next step) and
stored flat under stable, index-prefixed names by core's Orbax ``Checkpointer``.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from pipekit_train.fingerprint import structure_digest as _digest

from ._private import compiled_metrics

__all__ = [
    "capture_state",
    "restore_metrics",
    "restore_state",
    "state_template",
    "structure_digest",
]


def _name(i: int, variable: Any) -> str:
    """``00003_kernel``: the position and the variable's own short name.

    Not the path: it holds Keras' auto-numbered layer names (``dense_7``), which
    differ between two builds of the same model in one process.
    """
    return f"{i:05d}_" + re.sub(r"[^A-Za-z0-9_]+", "_", str(getattr(variable, "name", "v")))


def _optimizer_name(i: int, variable: Any) -> str:
    # Optimiser slot names embed the model's layer names too; the position is enough.
    return f"{i:05d}"


_NAMERS = {"model": _name, "optimizer": _optimizer_name, "metrics": _optimizer_name}


def _metric_variables(model: Any) -> list[Any]:
    metrics = compiled_metrics(model)
    return list(metrics.variables) if metrics is not None else []


def _groups(model: Any) -> dict[str, list[Any]]:
    groups = {"model": list(model.variables), "optimizer": list(model.optimizer.variables)}
    metric_variables = _metric_variables(model)
    if metric_variables:
        groups["metrics"] = metric_variables
    return groups


def capture_state(model: Any) -> dict[str, dict[str, np.ndarray]]:
    """Host copies of every model and optimiser variable (call after ``jax_state_sync``)."""
    return {
        group: {_NAMERS[group](i, v): np.array(v.value, copy=True) for i, v in enumerate(vs)}
        for group, vs in _groups(model).items()
    }


def state_template(model: Any) -> dict[str, dict[str, np.ndarray]]:
    """The structure ``restore`` fills (shapes and dtypes of every variable)."""
    return {
        group: {
            _NAMERS[group](i, v): np.zeros(tuple(v.shape), dtype=np.dtype(v.dtype))
            for i, v in enumerate(vs)
        }
        for group, vs in _groups(model).items()
    }


def restore_metrics(model: Any, state: dict[str, dict[str, Any]]) -> None:
    """Assign the restored compiled metrics' state (after ``fit`` reset it)."""
    saved = state.get("metrics") or {}
    for i, v in enumerate(_metric_variables(model)):
        v.assign(np.asarray(saved[_NAMERS["metrics"](i, v)]))


def restore_state(model: Any, state: dict[str, dict[str, Any]]) -> None:
    """Assign restored arrays back to the model's and optimiser's variables."""
    for group, vs in _groups(model).items():
        saved = state[group]
        for i, v in enumerate(vs):
            v.assign(np.asarray(saved[_NAMERS[group](i, v)]))


def structure_digest(model: Any) -> str:
    """A short hash of every variable's key, shape and dtype (the resume guard's model)."""
    return _digest(
        (f"{group}/{_NAMERS[group](i, v)}", tuple(v.shape), str(v.dtype))
        for group, vs in _groups(model).items()
        for i, v in enumerate(vs)
    )
