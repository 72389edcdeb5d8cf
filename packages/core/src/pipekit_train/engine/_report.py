"""``backend_info``: the run report every backend returns, built in one place.

Every backend's ``run`` ends with :func:`backend_info`, so the report has one schema
(``docs/run-report.md``): the keys of :class:`BackendInfo` with the types named
there, on every backend, whatever loop it runs (the per-step driver or a library's
own ``fit``). A backend adds what only it knows as *extras* — top-level keys of its
own, listed per backend in ``docs/run-report.md`` — and an extra may not reuse a
schema key (that would give the key a second meaning on one backend).

The per-step driver's facts come from ``DriverResult.outcome()``; the Lightning and
Keras bridges build a :class:`RunOutcome` from their own state. Pure Python.
"""

from __future__ import annotations

import time
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict, get_args, get_origin, get_type_hints

__all__ = ["BackendInfo", "REQUIRED_KEYS", "RunOutcome", "backend_info"]


class BackendInfo(TypedDict):
    """The keys every ``backend_info`` holds, with their types (``docs/run-report.md``)."""

    backend: str
    versions: dict[str, str]
    devices: list[str]
    process_count: int
    final_step: int
    resumed_from_step: int | None
    last_checkpoint_step: int | None
    stop_reason: str | None
    interrupted: str | None
    final_metrics: dict[str, float]
    total_seconds: float
    train_seconds: float
    steps_per_second: float | None
    run_dir: str | None
    diagnostics: dict[str, Any] | None
    warnings: list[str]


def _runtime_types(hint: Any) -> tuple[type, ...]:
    """``int | None`` → ``(int, NoneType)``; ``dict[str, str]`` → ``(dict,)``."""
    args = get_args(hint) if isinstance(hint, types.UnionType) else (hint,)
    return tuple(get_origin(a) or a for a in args)


#: :class:`BackendInfo` as ``{key: the types isinstance accepts}``.
REQUIRED_KEYS: dict[str, tuple[type, ...]] = {
    key: _runtime_types(hint) for key, hint in get_type_hints(BackendInfo).items()
}


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended, as the loop that ran it saw it (driver or bridge).

    ``steps_run`` counts the steps this process ran (not those restored from a
    checkpoint); ``train_seconds`` is the time spent in them.
    """

    final_step: int
    resumed_from_step: int | None
    last_checkpoint_step: int | None
    stop_reason: str | None
    interrupted: str | None
    train_seconds: float
    steps_run: int
    final_metrics: Mapping[str, Any] = field(default_factory=dict)
    run_dir: str | None = None


def backend_info(
    backend: str,
    outcome: RunOutcome,
    *,
    versions: Mapping[str, str],
    started: float,
    devices: Sequence[str],
    process_count: int = 1,
    diagnostics: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
    extras: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``backend_info`` dict of one run: the schema's keys, then the backend's extras.

    ``versions`` is ``{distribution: version}`` (``registry.distribution_versions``);
    ``started`` the ``time.perf_counter()`` at the start of the backend's ``run``, so
    ``total_seconds`` covers its set-up (validation, compilation) too; ``diagnostics``
    the sampler or fit diagnostics where they apply (``None`` elsewhere).

    Raises ``ValueError`` if an extra reuses a schema key (a bug in the backend).
    """
    train = float(outcome.train_seconds)
    info: BackendInfo = {
        "backend": backend,
        "versions": dict(versions),
        "devices": [str(d) for d in devices],
        "process_count": int(process_count),
        "final_step": int(outcome.final_step),
        "resumed_from_step": _optional_int(outcome.resumed_from_step),
        "last_checkpoint_step": _optional_int(outcome.last_checkpoint_step),
        "stop_reason": _stop_reason(outcome),
        "interrupted": outcome.interrupted,
        "final_metrics": dict(outcome.final_metrics),
        "total_seconds": float(time.perf_counter() - started),
        "train_seconds": train,
        "steps_per_second": (
            outcome.steps_run / train if train > 0 and outcome.steps_run > 0 else None
        ),
        "run_dir": outcome.run_dir,
        "diagnostics": None if diagnostics is None else dict(diagnostics),
        "warnings": [str(w) for w in warnings],
    }
    clash = sorted(set(extras or {}) & set(info))
    if clash:
        raise ValueError(f"{backend}: backend_info extras {clash} reuse schema keys")
    return {**info, **(extras or {})}


def _stop_reason(outcome: RunOutcome) -> str | None:
    """The loop's reason, or "already complete at step N" for a rerun of a finished run (it
    resumed at its last step and ran none), so a rerun from Python says what happened."""
    if outcome.stop_reason is not None or outcome.interrupted is not None:
        return outcome.stop_reason
    if outcome.resumed_from_step is not None and outcome.steps_run == 0:
        if int(outcome.final_step) == int(outcome.resumed_from_step):
            return f"already complete at step {int(outcome.final_step)}"
    return None


def _optional_int(value: int | None) -> int | None:
    return None if value is None else int(value)
