"""The callback that feeds a trial's objective to Optuna at host events and stops a pruned run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..callbacks import Callback, scalar

if TYPE_CHECKING:
    from ..carry import TrainerCarryState
    from ..protocols import LoopView

__all__ = ["ReportToTrial", "PRUNED_ATTR"]

#: The trial user attribute holding the step a trial was pruned at (kept across a kill).
PRUNED_ATTR = "pipekit_pruned_at"


class ReportToTrial(Callback):
    """``trial.report(value, step)`` for the objective; stop the run when the pruner says so.

    A ``val_`` objective is reported after each evaluation, any other at each log step. The
    pruning decision is written into the trial (``PRUNED_ATTR``) before the stop is
    requested, so a sweep killed after it records the trial as pruned without training on.
    """

    def __init__(self, trial: Any, objective: str) -> None:
        self.trial, self.objective = trial, objective

    def _report(self, state: TrainerCarryState, value: float) -> None:
        self.trial.report(value, state.step)
        if self.trial.should_prune():
            self.trial.set_user_attr(PRUNED_ATTR, state.step)
            state.should_stop = True
            state.stop_reason = f"pruned by the sweep's pruner at step {state.step}"

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        if self.objective.startswith("val_") or state.step % loop.log_every_n_steps:
            return
        values = state.window.get(self.objective)
        if values:
            self._report(state, scalar(values[-1]))

    def on_eval_end(
        self, loop: LoopView, state: TrainerCarryState, metrics: dict[str, float]
    ) -> None:
        if self.objective in metrics:
            self._report(state, float(metrics[self.objective]))
