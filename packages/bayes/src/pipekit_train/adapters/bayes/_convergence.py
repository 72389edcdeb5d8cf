"""``ConvergenceStop``: end an MCMC run once the draws so far have converged.

Every ``every_n_steps`` steps of the sampling phase (at least ``min_draws`` draws
per chain in), it computes ArviZ's rank-normalised split R-hat and bulk ESS
(:func:`~._diagnostics.diagnostics`, in NumPy) on every draw collected so far and stops the
run when every parameter has ``R-hat <= rhat`` and ``ESS_bulk >= ess_bulk``.

Optional stopping is biased: checking repeatedly and stopping at the first look
that passes favours stretches where the chains happen to agree, so the reported
R-hat is optimistic and the draws slightly over-represent such stretches. Checking
rarely (``every_n_steps``) and never before ``min_draws`` draws per chain (so
that R-hat compares chains that have each explored the posterior) limits the
bias; the run's own ``num_samples`` stays the upper bound.

Works with any backend whose trace holds ``sample__<site>`` draws (``blackjax``,
``numpyro-mcmc``); the check runs at chunk boundaries, which it itself sets.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pipekit_train.callbacks import Callback
from pipekit_train.errors import ConfigError

from ._diagnostics import diagnostics
from ._trace import draws_by_chain

__all__ = ["ConvergenceStop"]


def _num_chains(task: Any) -> int:
    counts = getattr(task, "counts", None)  # a BlackjaxTask
    return int(counts()[2]) if callable(counts) else int(getattr(task, "num_chains", 1))


class ConvergenceStop(Callback):
    """Stop sampling when every parameter reaches ``rhat`` and ``ess_bulk``.

    Args:
        rhat: the largest rank-normalised split R-hat accepted.
        ess_bulk: the smallest bulk ESS (all chains together) accepted.
        every_n_steps: how often to check (a chunk boundary; counted over all phases).
        min_draws: draws per chain collected before the first check.

    After the run, ``reached`` holds the last check's worst R-hat and ESS and the
    draws per chain (also in ``backend_info["stop_reason"]`` when it stopped).
    """

    def __init__(
        self,
        rhat: float = 1.01,
        ess_bulk: float = 400,
        every_n_steps: int = 100,
        min_draws: int = 100,
    ) -> None:
        for name, value, low in (("rhat", rhat, 1.0), ("ess_bulk", ess_bulk, 1.0)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
                raise ConfigError(
                    f"ConvergenceStop.{name} must be a number >= {low}, got {value!r}",
                    field=f"callbacks.ConvergenceStop.{name}",
                )
        for name, value in (("every_n_steps", every_n_steps), ("min_draws", min_draws)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(
                    f"ConvergenceStop.{name} must be an integer >= 1, got {value!r}",
                    field=f"callbacks.ConvergenceStop.{name}",
                )
        self.rhat, self.ess_bulk = float(rhat), float(ess_bulk)
        self.every_n_steps, self.min_draws = every_n_steps, min_draws
        self.reached: dict[str, Any] | None = None

    def reset(self) -> None:
        self.reached = None

    def on_step_end(self, loop: Any, state: Any) -> None:
        if state.phase != state.phases[-1] or state.trace is None:
            return
        if state.step % self.every_n_steps and state.step != state.total_steps:
            return
        samples, _ = draws_by_chain(state.trace(), _num_chains(loop.task))
        if not samples:
            return
        draws = next(iter(samples.values())).shape[1]
        if draws < self.min_draws:
            return
        sites = diagnostics(samples)["sites"]
        worst_rhat = max(float(np.nanmax(s["r_hat"])) for s in sites.values())
        worst_ess = min(float(np.nanmin(s["ess_bulk"])) for s in sites.values())
        self.reached = {"r_hat": worst_rhat, "ess_bulk": worst_ess, "draws_per_chain": draws}
        if worst_rhat <= self.rhat and worst_ess >= self.ess_bulk:
            state.should_stop = True
            state.stop_reason = (
                f"ConvergenceStop: every parameter has R-hat <= {self.rhat} (worst "
                f"{worst_rhat:.4f}) and bulk ESS >= {self.ess_bulk:g} (worst {worst_ess:.0f}) "
                f"after {draws} draws per chain"
            )
