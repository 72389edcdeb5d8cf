"""``backend_info``: the run report every backend returns, built in one place.

Every backend's ``run`` ends with :func:`backend_info`, so the report has one schema
(``docs/run-report.md``): the keys of :class:`BackendInfo` with the types named
there, on every backend, whatever loop it runs (the per-step driver or a library's
own ``fit``). A backend adds what only it knows as *extras* — top-level keys of its
own, listed per backend in ``docs/run-report.md`` — and an extra may not reuse a
schema key (that would give the key a second meaning on one backend).

The per-step driver's facts come from ``DriverResult.outcome()``; the Lightning and
Keras bridges build a :class:`RunOutcome` from their own state. Pure Python.

After the last step: the loop that ran the steps calls :func:`training_ended` once its
final checkpoint is committed (the driver does, and so do the Lightning and Keras
bridges); from then until ``TrainingLoop.run`` returns, whatever raises while the backend
builds the trained operator or this report is turned by :func:`after_the_last_step` into
a ``FinishError`` that names the stage (:func:`finishing`) and the call that failed, keeps
the original exception as ``__cause__``, and says that the final checkpoint is safe and
that a rerun builds the operator and the report from it without training again
(``docs/run-report.md``, "A failure after the last step").
"""

from __future__ import annotations

import time
import traceback
import types
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, get_args, get_origin, get_type_hints

from ..errors import FinishError, PipekitError

__all__ = [
    "BackendInfo",
    "REQUIRED_KEYS",
    "RunOutcome",
    "after_the_last_step",
    "backend_info",
    "finishing",
    "training_ended",
    "training_started",
]


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
    with finishing("report", "backend_info"):
        return _backend_info(
            backend,
            outcome,
            versions=versions,
            started=started,
            devices=devices,
            process_count=process_count,
            diagnostics=diagnostics,
            warnings=warnings,
            extras=extras,
        )


def _backend_info(
    backend: str,
    outcome: RunOutcome,
    *,
    versions: Mapping[str, str],
    started: float,
    devices: Sequence[str],
    process_count: int,
    diagnostics: Mapping[str, Any] | None,
    warnings: Sequence[str],
    extras: Mapping[str, Any] | None,
) -> dict[str, Any]:
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


# ------------------------------------------------------------------ after the last step


@dataclass
class _Ended:
    """The facts of a run whose steps are done: its last step and its committed checkpoint."""

    final_step: int
    checkpoint_step: int | None
    steps_run: int | None = None
    total_steps: int | None = None
    stage: tuple[str, str | None] | None = None  # the stage under way
    failed: tuple[str, str | None] | None = None  # the stage an exception left
    failed_with: BaseException | None = None  # that exception


_ENDED: ContextVar[_Ended | None] = ContextVar("pipekit_train_ended", default=None)

#: What the stages build, for messages.
_STAGE_TEXT = {
    "operator": "the trained operator",
    "report": "the run report",
}
_BOTH = "the trained operator and the run report"


def training_started() -> None:
    """A loop is about to run steps: an error from here on is a training error, as raised."""
    _ENDED.set(None)


def training_ended(
    final_step: int,
    checkpoint_step: int | None,
    *,
    steps_run: int | None = None,
    total_steps: int | None = None,
) -> None:
    """The loop that ran the steps has ended at ``final_step``; its newest checkpoint,
    ``checkpoint_step`` (``None``: none), is committed (pending asynchronous writes
    finished); ``steps_run`` this process ran (0: a rerun of a finished run);
    ``total_steps`` the run's last step (more than ``final_step`` after a stop). Called by
    the driver and the loop-owning bridges; what raises after this, until
    ``TrainingLoop.run`` returns, is a ``FinishError`` (:func:`after_the_last_step`)."""
    _ENDED.set(
        _Ended(
            int(final_step),
            None if checkpoint_step is None else int(checkpoint_step),
            None if steps_run is None else int(steps_run),
            None if total_steps is None else int(total_steps),
        )
    )


@contextmanager
def finishing(stage: str, call: str | None = None) -> Iterator[None]:
    """Name what is built after the last step: ``stage`` is ``"operator"`` or ``"report"``,
    ``call`` what is called (``"JaxModelOp.with_module"``). Outside the end of a run (no
    :func:`training_ended` yet) it does nothing."""
    ended = _ENDED.get()
    if ended is None:
        yield
        return
    previous, ended.stage = ended.stage, (stage, call)
    try:
        yield
    except BaseException as exc:
        if ended.failed_with is not exc:  # the innermost stage it left names it
            ended.failed, ended.failed_with = (stage, call), exc
        raise
    finally:
        ended.stage = previous


@contextmanager
def after_the_last_step(*, backend: str, checkpoint_dir: str | None) -> Iterator[None]:
    """Around a backend's ``run``: an exception raised after :func:`training_ended` is
    re-raised as ``FinishError`` (its cause the original); any other passes unchanged.

    A ``PipekitError`` the backend raised on purpose keeps its type (a caller catching
    ``ConfigError`` still does); what is kept on disk is added to it as a note."""
    token = _ENDED.set(None)
    try:
        yield
    except Exception as exc:
        ended = _ENDED.get()
        if ended is None or isinstance(exc, FinishError):
            raise
        if isinstance(exc, PipekitError):
            exc.add_note(f"(after the last step) {_what_is_kept(ended, checkpoint_dir)}")
            raise
        raise finish_error(exc, ended, backend=backend, checkpoint_dir=checkpoint_dir) from exc
    finally:
        _ENDED.reset(token)


def finish_error(
    exc: BaseException, ended: _Ended, *, backend: str, checkpoint_dir: str | None
) -> FinishError:
    """The ``FinishError`` for ``exc``, raised after the last step of ``ended``'s run."""
    left = ended.failed if _caused_by(exc, ended.failed_with) else None
    stage, call = left or ended.stage or ("operator or report", None)
    what = _STAGE_TEXT.get(stage, _BOTH)
    where = _failing_call(exc)
    detail = f" ({call})" if call else ""
    rerun = ended.steps_run == 0 and ended.checkpoint_step == ended.final_step
    done = (
        f"the {backend} run was already complete at step {ended.final_step} (no steps run "
        f"now), but building {what}{detail} from its checkpoint failed again"
        if rerun
        else f"the {backend} run trained to step {ended.final_step}, but building "
        f"{what}{detail} failed after the last step"
    )
    head = f"{done}: {type(exc).__name__}: {exc}" + (f"\n  failing call: {where}" if where else "")
    return FinishError(
        f"{head}\n{_what_is_kept(ended, checkpoint_dir)}",
        stage=stage,
        final_step=ended.final_step,
        checkpoint_step=ended.checkpoint_step,
    )


def _caused_by(exc: BaseException | None, cause: BaseException | None) -> bool:
    """Whether ``cause`` is ``exc`` or in its chain (a stage's error re-raised as another)."""
    seen: set[int] = set()
    while exc is not None and cause is not None and id(exc) not in seen:
        if exc is cause:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _what_is_kept(ended: _Ended, checkpoint_dir: str | None) -> str:
    step, final = ended.checkpoint_step, ended.final_step
    if checkpoint_dir is None:
        return (
            "TrainingLoop.checkpoint_dir is not set, so the trained state was not saved and a "
            "rerun trains again from step 0; set checkpoint_dir to keep a finished run."
        )
    if step is None:
        return (
            f"No checkpoint was committed in {checkpoint_dir}, so a rerun trains again from step 0."
        )
    rerun = (
        f"Fix the cause (a transient one needs no fix) and rerun the same loop: it resumes "
        f"from step {step}, "
    )
    total = ended.total_steps
    if step >= final and total is not None and final < total:
        return (
            f"The checkpoint of the step the run stopped at, step {step} in {checkpoint_dir}, "
            f"is committed and safe. {rerun}nothing before it is trained again (the run "
            f"stopped before its last step, {total})."
        )
    if step >= final:
        return (
            f"The final checkpoint, step {step} in {checkpoint_dir}, was committed before "
            f"this stage began and is safe. {rerun}runs no steps and builds {_BOTH} from "
            "it; nothing is trained again."
        )
    return (
        f"The newest checkpoint, step {step} in {checkpoint_dir}, is committed and safe. "
        f"{rerun}runs steps {step + 1}..{final} again, then builds {_BOTH}."
    )


def _failing_call(exc: BaseException) -> str | None:
    """The first call out of pipekit-train's code on the way to ``exc`` (the user's op
    class, a library's predictive), ``qualname (file:line)``; else the innermost frame."""
    frames = list(traceback.walk_tb(exc.__traceback__))
    if not frames:
        return None
    seen_ours = False
    chosen = frames[-1]
    for frame, line in frames:
        ours = str(frame.f_globals.get("__name__", "")).startswith("pipekit_train")
        if ours:
            seen_ours = True
        elif seen_ours:
            chosen = (frame, line)
            break
    frame, line = chosen
    name = getattr(frame.f_code, "co_qualname", frame.f_code.co_name)
    return f"{name} ({Path(frame.f_code.co_filename).name}:{line})"
