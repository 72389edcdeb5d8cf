"""The checkpoint clock: the time side of the checkpoint cadence, one decision for all processes.

:class:`~pipekit_train.engine.Schedule` says, from the step alone, whether a save is due
regardless of time, or whether the clock decides (``"seconds"``: ``every_n_seconds``;
``"floor"``: a default-cadence step, saved only when the time since the previous save is at
least :data:`FLOOR_FACTOR` times what that save cost). A save is collective, so in a
multi-process run every process must decide the same: process 0's clock decides and
``share`` hands its decision to the others (a broadcast, asked only at the events where the
clock decides, so a run without a time cadence never pays one; a single process never does).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["FLOOR_FACTOR", "SaveClock"]

#: The default cadence saves at most once per ``FLOOR_FACTOR`` × the last save's cost, start
#: to start: ≤ 4 % of the run's wall time. The cost is the save's whole wall time, from the call
#: to the asynchronous commit's end where the store says when that is (``busy``): on a loaded
#: machine the commit's threads compete with the step, and its wall time bounds what it takes.
FLOOR_FACTOR = 25.0


def _same(decision: bool) -> bool:
    return decision


@dataclass
class SaveClock:
    """When the previous checkpoint started and what it cost; decides time-based saves.

    ``now``: the clock (monotonic seconds; injectable for tests); ``share``: process 0's
    decision → every process's (identity for one process); ``busy``: whether the store's
    asynchronous commit is still running (``None``: saves are synchronous, a save's cost is
    its call). :meth:`poll` at every host event notes when a pending commit has finished.
    The run's first save is not a measure: it pays one-time set-up (the store's threads and
    folders, compiling the state's copy; seconds under load) that would hold the default
    cadence off for minutes, so the floor starts from the second save's cost.
    """

    every_seconds: float | None = None
    now: Callable[[], float] = time.monotonic
    share: Callable[[bool], bool] = _same
    busy: Callable[[], bool] | None = None
    last: float = field(default=0.0)
    cost: float = 0.0
    pending: float | None = None
    measured: int = 0

    def __post_init__(self) -> None:
        self.last = self.now()

    def poll(self) -> None:
        """If the last save's commit has finished since, record its whole cost."""
        if self.pending is not None and (self.busy is None or not self.busy()):
            self.cost = max(0.0, self.now() - self.pending) if self.measured else 0.0
            self.measured += 1
            self.pending = None

    def wants(self, timing: str) -> bool:
        """This process's view: is a ``"seconds"`` / ``"floor"`` save due now?"""
        self.poll()
        elapsed = self.now() - self.last
        if timing == "seconds":
            return self.every_seconds is not None and elapsed >= self.every_seconds
        # The default cadence never queues a save behind a commit still in flight.
        return self.pending is None and elapsed >= FLOOR_FACTOR * self.cost

    def decide(self, timing: str) -> bool:
        """The decision every process takes (process 0's, through ``share``)."""
        return bool(self.share(self.wants(timing)))

    def saved(self, began: float) -> None:
        """Record a save that started at ``began`` (on this clock) and has just returned."""
        self.last = self.pending = began
        self.poll()
