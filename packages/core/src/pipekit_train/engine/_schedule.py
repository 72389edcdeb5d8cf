"""When host events fall: the one place that decides the cadences of a run.

Every loop — the per-step driver and the Lightning and Keras bridges — asks a
:class:`Schedule` whether a step is a host event and what is due there, so an
event falls on the same step whichever loop runs it and whatever
``steps_per_call`` is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..callbacks import Callback, Checkpoint

if TYPE_CHECKING:
    from ..protocols import LoopView

__all__ = ["Schedule", "event_intervals", "next_event_step"]


def event_intervals(loop: LoopView, *, checkpointing: bool | None = None) -> list[int]:
    """The cadences (in steps) at which host events are due for ``loop``.

    Taken from ``loop.callbacks`` (not a per-process list), so every process
    places its boundaries, and so its compiled calls, at the same steps.
    """
    intervals = [loop.log_every_n_steps]
    if loop.eval_every_n_steps:
        intervals.append(loop.eval_every_n_steps)
    ckpt = loop.checkpoint_callback
    if checkpointing is None:
        checkpointing = loop.checkpoint_dir is not None
    if ckpt is not None and checkpointing and ckpt.step_interval is not None:
        intervals.append(ckpt.step_interval)
    for cb in loop.callbacks:
        n = getattr(cb, "every_n_steps", None)
        if isinstance(cb, Callback) and n and not isinstance(cb, Checkpoint):
            intervals.append(int(n))
    return sorted(set(intervals))


def regular_chunk(loop: LoopView, *, checkpointing: bool, steps_per_call: int) -> int:
    """The length most of ``loop``'s fused calls have: ``steps_per_call``, cut to the
    greatest common divisor of its event cadences (a log every 50 steps and 100 steps a call
    fuse 50 at a time). A backend that compiles one fixed scan length compiles this one."""
    from math import gcd

    # event_intervals always holds the log cadence, so the divisor is never gcd() == 0
    every = event_intervals(loop, checkpointing=checkpointing)
    return max(1, min(int(steps_per_call), gcd(*every)))


def next_event_step(step: int, intervals: Sequence[int], max_steps: int) -> int:
    """The first step after ``step`` at which a host event is due."""
    candidates = [(step // n + 1) * n for n in intervals]
    return min([max_steps, *candidates])


@dataclass(frozen=True)
class Schedule:
    """The host-event cadences of one run.

    ``intervals``: every cadence (log, eval, checkpoint, callbacks' ``every_n_steps``);
    ``total``: the last step; ``phase_ends``: the step at which each phase ends (each
    is an event and a checkpoint); ``eval_every`` / ``checkpoint_every``: ``None`` when
    the run does not evaluate / checkpoint.
    """

    intervals: tuple[int, ...]
    total: int
    phase_ends: tuple[int, ...] = ()
    eval_every: int | None = None
    checkpoint_every: int | None = None
    evaluating: bool = False
    checkpoint_seconds: float | None = None
    checkpoint_floor: bool = False

    @property
    def checkpointing(self) -> bool:
        """Whether the run checkpoints at all (a step or a time cadence)."""
        return self.checkpoint_every is not None or self.checkpoint_seconds is not None

    @classmethod
    def for_loop(
        cls,
        loop: LoopView,
        *,
        checkpointing: bool,
        evaluating: bool,
        total: int | None = None,
        phase_ends: Sequence[int] = (),
    ) -> Schedule:
        """The schedule of ``loop`` (``total`` defaults to ``loop.max_steps``)."""
        ckpt = loop.checkpoint_callback if checkpointing else None
        last = int(loop.max_steps) if total is None else int(total)
        return cls(
            intervals=tuple(event_intervals(loop, checkpointing=checkpointing)),
            total=last,
            phase_ends=tuple(int(e) for e in phase_ends) or (last,),
            eval_every=loop.eval_every_n_steps or None,
            checkpoint_every=ckpt.step_interval if ckpt is not None else None,
            evaluating=evaluating,
            checkpoint_seconds=ckpt.every_n_seconds if ckpt is not None else None,
            checkpoint_floor=ckpt.default_cadence if ckpt is not None else False,
        )

    def next_event(self, step: int) -> int:
        """The first host event (or phase end) after ``step``."""
        ends = [e for e in self.phase_ends if e > step]
        return min(next_event_step(step, self.intervals, self.total), *ends, self.total)

    def is_event(self, step: int) -> bool:
        """Whether step ``step`` (1-based, after the update) is a host event."""
        return (
            step >= self.total
            or step in self.phase_ends
            or any(step % n == 0 for n in self.intervals)
        )

    def eval_due(self, step: int, *, stopping: bool) -> bool:
        """Evaluation at the end, at ``eval_every_n_steps``, and before an early stop."""
        if not self.evaluating:
            return False
        every = self.eval_every
        return step >= self.total or bool(every and step % every == 0) or stopping

    def checkpoint_due(self, step: int, *, stopping: bool) -> bool:
        """Whether a checkpoint is due at ``step`` whatever the clock says: an explicit step
        cadence, a phase end, the end, any stop."""
        if not self.checkpointing:
            return False
        every = None if self.checkpoint_floor else self.checkpoint_every
        return (
            bool(every and step % every == 0)
            or step >= self.total
            or stopping
            or step in self.phase_ends
        )

    def checkpoint_timing(self, step: int, *, stopping: bool) -> str | None:
        """What the clock decides at event ``step`` when :meth:`checkpoint_due` is False:
        ``"floor"`` (a default-cadence step: save if the time floor has passed), ``"seconds"``
        (``every_n_seconds``: save if that long has passed), or ``None`` (no save here).

        A function of the step alone, so every process asks the clock at the same events.
        """
        if not self.checkpointing or self.checkpoint_due(step, stopping=stopping):
            return None
        every = self.checkpoint_every
        if self.checkpoint_floor and every and step % every == 0:
            return "floor"
        if self.checkpoint_seconds is not None:
            return "seconds"
        return None
