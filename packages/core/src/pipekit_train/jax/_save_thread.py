"""One background thread that runs the blocking part of an Orbax save for the training thread.

Orbax's asynchronous save still blocks its caller for a part of every save (argument
checks, the step's tmp folders, per-item handler set-up, a thread per commit future):
~8-13 ms of a 2-core machine's time per save of the digits MLP, measured here, while
the device waits for the next chunk — at a checkpoint every 100 steps of 0.65 ms, a
sixth of the step time (``benchmarks/``, case 5). The :class:`~.checkpoint.Checkpointer`
hands that call to this thread instead, so the training thread dispatches the next
chunk at once and the two overlap.

What stays on the training thread: the device copy of the carry, packing it into host
buffers, the meta and its checksum (all cheap, and all of the values a save needs, so
nothing the thread reads changes under it). At most one hand-off is in flight: the next
save, and every other use of the Orbax manager, waits for it first (:meth:`settle`) and
raises what it raised, so an error of a save surfaces at the next checkpoint call and
at the latest at ``wait()``/``close()``, where Orbax's own commit errors surface too.

The thread keeps the training thread's scheduling priority: lowered (``nice`` +10,
which the threads Orbax starts from it inherit), case 5 measured worse (1.28 against
1.21 of the step time without checkpoints), as the low-priority thread, preempted by
the step's compute threads while it holds the GIL, then holds up the training thread's
next dispatch.

Used only by a single-process run with asynchronous saves: a multi-process save's
barriers stay on the thread that decided them.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

__all__ = ["SaveThread"]


class SaveThread:
    """Runs one call at a time in a background thread; :meth:`settle` waits for it."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        self._pending: Future[Any] | None = None

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run ``fn(*args)`` in the thread, after the call in flight (whose error it raises)."""
        self.settle()
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="pipekit_save")
        self._pending = self._executor.submit(fn, *args)

    def busy(self) -> bool:
        """Whether a call is still running."""
        return self._pending is not None and not self._pending.done()

    def settle(self) -> None:
        """Wait for the call in flight, if any, and raise what it raised."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        """Settle, then end the thread (it is started again by the next :meth:`submit`)."""
        try:
            self.settle()
        finally:
            executor, self._executor = self._executor, None
            if executor is not None:
                executor.shutdown(wait=True)
