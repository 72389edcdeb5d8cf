"""SIGTERM and Ctrl-C as a stop request that the loop honours at its next boundary.

A preempted job gets SIGTERM; a person presses Ctrl-C. Both mean "save and
stop", not "die here": the handler only sets a flag, and the driver (or a
loop-owning backend's bridge) checkpoints at the next chunk boundary and returns
normally. A second Ctrl-C aborts at once with ``KeyboardInterrupt``. Handlers are
installed only in the main thread and restored on exit.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType
from typing import Any

__all__ = ["StopSignals"]


class StopSignals:
    """Context manager turning SIGTERM / the first SIGINT into ``received`` (a signal name)."""

    def __init__(self, *, message: bool = True) -> None:
        self.received: str | None = None
        self._message = message
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.getsignal(sig)
                signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        if signum == signal.SIGINT and self.received == "SIGINT":
            # Second Ctrl-C: give up on the clean stop.
            signal.signal(signal.SIGINT, signal.default_int_handler)
            raise KeyboardInterrupt
        if self.received is None:
            self.received = name
            if self._message:
                extra = " (press Ctrl-C again to abort now)" if signum == signal.SIGINT else ""
                print(
                    f"\npipekit-train: {name} received; checkpointing at the next step boundary "
                    f"and stopping{extra}",
                    file=sys.stderr,
                    flush=True,
                )

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous)
        self._previous = {}
