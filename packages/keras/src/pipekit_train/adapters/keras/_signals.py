"""SIGTERM and the first Ctrl-C become a flag, checked after every Keras step.

Keras installs no signal handler: SIGTERM kills a ``fit`` with nothing saved and
SIGINT raises through it, sometimes leaving variables on donated buffers. Here
both only set a flag; the bridge checkpoints and stops at the next step end. A
second Ctrl-C raises ``KeyboardInterrupt`` as usual.
"""

from __future__ import annotations

import signal
import threading
from typing import Any

__all__ = ["SignalFlag"]


class SignalFlag:
    """Context manager: ``received`` is the first signal's name (``"SIGTERM"``/``"SIGINT"``)."""

    def __init__(self) -> None:
        self.received: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> SignalFlag:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                self._previous[sig] = signal.getsignal(sig)
                signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        if self.received is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # the second Ctrl-C: stop now, without a checkpoint
        self.received = signal.Signals(signum).name

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()
