"""The callback the SIGKILL resume workers use to kill (or stop) their own process at a step.

Shared by the Bayesian backends' workers (``tests/numpyro``, ``tests/blackjax``).
"""

from __future__ import annotations

import os
import signal

from pipekit_train import Callback


class Killer(Callback):
    """At step ``kill_at``: ``hook`` "step" SIGKILLs at the host event, "checkpoint" right after
    that step's checkpoint was written, "sigterm" sends SIGTERM (checkpoint, then return)."""

    def __init__(self, kill_at: int, hook: str) -> None:
        self.kill_at, self.hook = kill_at, hook

    def on_step_end(self, loop, state) -> None:
        if state.step == self.kill_at and self.hook == "step":
            os.kill(os.getpid(), signal.SIGKILL)
        if state.step == self.kill_at and self.hook == "sigterm":
            os.kill(os.getpid(), signal.SIGTERM)

    def on_checkpoint(self, loop, state, step) -> None:
        if step == self.kill_at and self.hook == "checkpoint":
            os.kill(os.getpid(), signal.SIGKILL)
