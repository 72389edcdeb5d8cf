"""The callbacks that feed trials' objectives to Optuna at host events and stop pruned runs
(``ReportToTrial`` for one trial, ``ReportToMembers`` for the members of a population)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..callbacks import Callback, scalar

if TYPE_CHECKING:
    from ..carry import TrainerCarryState
    from ..protocols import LoopView

__all__ = ["ReportToTrial", "ReportToMembers", "PRUNED_ATTR", "MEMBER_SUFFIX"]

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


#: A population logs member ``i``'s metric ``name`` as ``name + MEMBER_SUFFIX + str(i)``
#: (the Equinox backend's ``run_population``: ``loss/member_0``, ``val_loss/member_3``).
MEMBER_SUFFIX = "/member_"


def _of_member(values: Mapping[str, Any], i: int) -> dict[str, Any]:
    suffix = f"{MEMBER_SUFFIX}{i}"
    return {k[: -len(suffix)]: v for k, v in values.items() if k.endswith(suffix)}


class ReportToMembers(Callback):
    """``ReportToTrial`` for a population: member ``i``'s objective to ``trials[i]``.

    ``trials[i]`` is member ``i``'s ``optuna.Trial``, or ``None`` for a member whose trial
    is already finished (pruned before a kill): it is not reported. When the pruner says a
    member is done, its step is written into its trial (``PRUNED_ATTR``) and
    ``on_pruned(i, step, metrics)`` settles it (told ``PRUNED``, its slot done) at once;
    the population goes on with the member masked, not removed: the vmapped program keeps
    computing it (one compiled shape, one checkpoint of every member), but nothing of it is
    reported or told again. When no member is left, the run stops.
    """

    def __init__(
        self,
        trials: Sequence[Any | None],
        objective: str,
        on_pruned: Callable[[int, int, dict[str, float]], None],
    ) -> None:
        self.trials, self.objective, self.on_pruned = list(trials), objective, on_pruned

    def _report(self, state: TrainerCarryState, values: Callable[[int], dict[str, float]]) -> None:
        for i, trial in enumerate(self.trials):
            if trial is None:
                continue
            metrics = values(i)
            if self.objective not in metrics:
                continue
            trial.report(metrics[self.objective], state.step)
            if trial.should_prune():
                trial.set_user_attr(PRUNED_ATTR, state.step)
                self.trials[i] = None
                self.on_pruned(i, state.step, metrics)
        if all(t is None for t in self.trials):
            state.should_stop = True
            state.stop_reason = f"every member pruned by the sweep's pruner by step {state.step}"

    def on_step_end(self, loop: LoopView, state: TrainerCarryState) -> None:
        if self.objective.startswith("val_") or state.step % loop.log_every_n_steps:
            return
        window = state.window
        self._report(
            state, lambda i: {k: scalar(v[-1]) for k, v in _of_member(window, i).items() if v}
        )

    def on_eval_end(
        self, loop: LoopView, state: TrainerCarryState, metrics: dict[str, float]
    ) -> None:
        self._report(state, lambda i: {k: float(v) for k, v in _of_member(metrics, i).items()})
