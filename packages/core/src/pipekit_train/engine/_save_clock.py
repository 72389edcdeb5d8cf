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

#: The default cadence saves at most once per ``FLOOR_FACTOR`` × the last save's blocking
#: cost: 2 % of step time for the save's own wait, which leaves room under 5 % for an
#: asynchronous commit's work in the background.
FLOOR_FACTOR = 50.0


def _same(decision: bool) -> bool:
    return decision


@dataclass
class SaveClock:
    """When the previous checkpoint was written and what it cost; decides time-based saves.

    ``now``: the clock (monotonic seconds; injectable for tests); ``share``: process 0's
    decision → every process's (identity for one process).
    """

    every_seconds: float | None = None
    now: Callable[[], float] = time.monotonic
    share: Callable[[bool], bool] = _same
    last: float = field(default=0.0)
    cost: float = 0.0

    def __post_init__(self) -> None:
        self.last = self.now()

    def wants(self, timing: str) -> bool:
        """This process's view: is a ``"seconds"`` / ``"floor"`` save due now?"""
        elapsed = self.now() - self.last
        if timing == "seconds":
            return self.every_seconds is not None and elapsed >= self.every_seconds
        return elapsed >= FLOOR_FACTOR * self.cost

    def decide(self, timing: str) -> bool:
        """The decision every process takes (process 0's, through ``share``)."""
        return bool(self.share(self.wants(timing)))

    def saved(self, began: float) -> None:
        """Record a save that started at ``began`` (on this clock) and has just returned."""
        end = self.now()
        self.cost = max(0.0, end - began)
        self.last = end
