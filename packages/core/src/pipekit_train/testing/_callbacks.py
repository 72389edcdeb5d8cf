"""The kit's own callback and writer: a signal at a step, and a log of what a run reported.

:class:`SignalAt` is named in the YAML files the kit runs through ``pipekit-train run``
(``{factory: "pipekit_train.testing:SignalAt", kwargs: {step: 6, signal: SIGKILL}}``), so a
real process sends itself a real signal at a host event. :class:`EventLog` and
:class:`RowLog` record, in order, every hook a run called and every row a writer got, for
the event-order and writer-rows checks.
"""

from __future__ import annotations

import math
import os
import signal as _signal
from dataclasses import dataclass, field
from typing import Any

from ..callbacks import Callback

__all__ = ["SignalAt", "EventLog", "RowLog"]


class SignalAt(Callback):
    """Send this process ``signal`` (``"SIGKILL"``, ``"SIGTERM"``, ``"SIGINT"``) at the host
    event of step ``step`` (``hook="step"``) or right after that step's checkpoint was handed
    to the writer (``hook="checkpoint"``)."""

    def __init__(self, step: int, signal: str = "SIGKILL", hook: str = "step") -> None:
        if hook not in ("step", "checkpoint"):
            raise ValueError(f"SignalAt.hook must be 'step' or 'checkpoint', got {hook!r}")
        self.step, self.signal, self.hook = int(step), getattr(_signal, signal), hook
        self.sent = False

    def reset(self) -> None:
        self.sent = False

    def _fire(self) -> None:
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), self.signal)

    def on_step_end(self, loop: Any, state: Any) -> None:
        if self.hook == "step" and int(state.step) == self.step:
            self._fire()

    def on_checkpoint(self, loop: Any, state: Any, step: int) -> None:
        if self.hook == "checkpoint" and int(step) == self.step:
            self._fire()


class EventLog(Callback):
    """Every hook call of a run, in order, as ``(hook, step)``; ``reset`` included."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int | None]] = []
        self.metrics: dict[int, dict[str, float]] = {}

    def reset(self) -> None:
        self.events.append(("reset", None))

    def on_run_start(self, loop: Any, state: Any) -> None:
        self.events.append(("on_run_start", int(state.step)))

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.events.append(("on_step_end", int(state.step)))
        self.metrics[int(state.step)] = {k: float(v) for k, v in dict(state.metrics).items()}

    def on_eval_end(self, loop: Any, state: Any, metrics: dict[str, float]) -> None:
        self.events.append(("on_eval_end", int(state.step)))

    def on_checkpoint(self, loop: Any, state: Any, step: int) -> None:
        self.events.append(("on_checkpoint", int(step)))

    def on_run_end(self, loop: Any, state: Any, info: dict[str, Any]) -> None:
        self.events.append(("on_run_end", int(state.step)))

    def on_exception(self, loop: Any, state: Any, error: BaseException) -> None:
        self.events.append(("on_exception", int(state.step)))


@dataclass
class RowLog:
    """A ``MetricWriter`` that keeps every row it is given, and counts ``flush``/``close``."""

    rows: list[tuple[int, dict[str, float]]] = field(default_factory=list)
    flushes: int = 0
    closes: int = 0

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self.rows.append((int(step), {k: float(v) for k, v in metrics.items()}))

    def flush(self) -> None:
        self.flushes += 1

    def close(self) -> None:
        self.closes += 1

    def non_finite(self) -> list[str]:
        """``"step: key"`` for every value that is not a finite float."""
        return [f"{s}: {k}" for s, row in self.rows for k, v in row.items() if not math.isfinite(v)]
