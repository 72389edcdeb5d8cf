"""The one host-event routine: what happens at an event step, in one order, for every loop.

The per-step driver and the Lightning and Keras bridges call :func:`host_event`
once the window's values are on the host (:func:`record_window`); none of them
codes the order again. At event step ``s``:

1. (the caller) fetch the window in one transfer → :func:`record_window`; if the event
   before checkpointed, ``site.settle()`` waits until that checkpoint has committed, so
   every callback of an event finds the checkpoints of earlier events durable (a sweep
   tells its study a pruned member's result there; a kill after it resumes from one);
2. ``on_step_end`` of each callback, the metric writer's first;
3. evaluation if due → ``val_*`` metrics → ``on_eval_end``;
4. ``site.before_checkpoint`` (a library's own end-of-epoch work, e.g. Lightning's
   epoch-interval LR schedulers, which may read ``val_*``);
5. a stop signal that has arrived becomes a stop;
6. the checkpoint if due (its step cadence, a phase end, the end, any stop; or, where the
   schedule leaves it to the clock, ``every_n_seconds`` / the default cadence's time floor,
   decided by process 0's :class:`SaveClock` for every process): the runner's
   metadata, the phase, the resume fingerprint and the data position, saved with the
   backend's state by ``site.save`` → ``on_checkpoint``;
7. the stop decision is returned; the caller ends its loop.

A backend supplies only the mechanics, as an :class:`EventSite`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..callbacks import scalar
from ..carry import TrainerCarryState
from ._runner import CallbackRunner
from ._save_clock import SaveClock
from ._schedule import Schedule

__all__ = ["EventSite", "EventOutcome", "host_event", "record_window"]


def _no_signal() -> str | None:
    return None


@dataclass
class EventSite:
    """What one loop supplies at a host event: its mechanics, never the order.

    ``evaluate``: one pass over the validation data → ``{name: value}`` (``None``:
    no validation data); ``save(step, meta)``: write the backend's state with
    ``meta`` as one checkpoint (``None``: not checkpointing); ``data_state(step)``:
    the data position to resume from; ``signal()``: the stop signal received so
    far, if any; ``before_checkpoint(val_metrics)``: a library's own work between
    evaluation and checkpoint; ``fingerprint``: the resume guard written into
    every checkpoint; ``clock``: the run's :class:`SaveClock` (kept across events; ``None``:
    the default cadence saves at every due step and ``every_n_seconds`` never fires);
    ``settle()``: block until the checkpoints saved so far have committed (``None``: saves
    are durable when ``save`` returns).
    """

    evaluate: Callable[[], Mapping[str, float]] | None = None
    save: Callable[[int, dict[str, Any]], None] | None = None
    data_state: Callable[[int], Any] | None = None
    signal: Callable[[], str | None] = _no_signal
    before_checkpoint: Callable[[dict[str, float] | None], None] | None = None
    fingerprint: Mapping[str, Any] = field(default_factory=dict)
    clock: SaveClock | None = None
    settle: Callable[[], None] | None = None
    #: Whether the last event saved a checkpoint that ``settle`` has not waited for.
    unsettled: bool = False


@dataclass(frozen=True)
class EventOutcome:
    """What happened at one event: the evaluation, the checkpoint, the stop."""

    eval_metrics: dict[str, float] | None
    checkpointed: bool
    stop: bool
    signalled: bool


def record_window(
    state: TrainerCarryState, window: dict[str, list[Any]], steps: Sequence[int]
) -> None:
    """Set ``state.window`` / ``window_steps`` and each metric's latest value."""
    state.window = window
    state.window_steps = list(steps)
    for name, seq in window.items():
        if len(seq):
            state.metrics[name] = scalar(seq[-1])


def host_event(
    state: TrainerCarryState, runner: CallbackRunner, schedule: Schedule, site: EventSite
) -> EventOutcome:
    """Run steps 2-7 of the event order at ``state.step`` (see the module docstring)."""
    step = state.step
    if site.unsettled and site.settle is not None:
        site.settle()
    site.unsettled = False
    if site.clock is not None:
        site.clock.poll()
    runner.step_end(state)
    eval_metrics: dict[str, float] | None = None
    if site.evaluate is not None and schedule.eval_due(step, stopping=state.should_stop):
        eval_metrics = {f"val_{k}": float(v) for k, v in site.evaluate().items()}
        runner.eval_end(state, eval_metrics)
    if site.before_checkpoint is not None:
        site.before_checkpoint(eval_metrics)
    signalled = False
    received = site.signal()
    if received is not None and not state.should_stop:
        state.should_stop = True
        state.stop_reason = f"{received}: checkpointed and stopped"
        signalled = True
    checkpointed = False
    if site.save is not None and _save_due(schedule, site.clock, step, state.should_stop):
        began = site.clock.now() if site.clock is not None else 0.0
        meta = runner.checkpoint_meta(state)
        meta["phase"] = state.phase
        meta["fingerprint"] = dict(site.fingerprint)
        if site.data_state is not None:
            meta["data"] = site.data_state(step)
        site.save(step, meta)
        site.unsettled = True
        if site.clock is not None:
            site.clock.saved(began)
        checkpointed = True
        runner.checkpoint_done(state, step)
    return EventOutcome(eval_metrics, checkpointed, bool(state.should_stop), signalled)


def _save_due(schedule: Schedule, clock: SaveClock | None, step: int, stopping: bool) -> bool:
    """The step's rule first; where it leaves the decision to the clock, the clock's."""
    if schedule.checkpoint_due(step, stopping=stopping):
        return True
    timing = schedule.checkpoint_timing(step, stopping=stopping)
    if timing is None:
        return False
    if clock is None:
        return timing == "floor"
    return clock.decide(timing)
