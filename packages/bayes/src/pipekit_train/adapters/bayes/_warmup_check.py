"""The end-of-warmup check: a chain that warmup left stuck is named before its draws are taken.

A sampler's warmup adapts each chain's step size. A chain that started where the density is
flat or steep to rounding (an ARMA's non-invertible MA start) comes out of warmup with a step
size orders of magnitude below the other chains' (1.9e-16 against 0.28-0.71): it will not move
in the sampling phase, and its draws will not be the posterior's. The health line says so at
the end of the run (``_health``); this hook says it at the host event that ends warmup, before
any draw is kept, so a user can stop a long run there instead of sampling it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pipekit_train.callbacks import Callback
from pipekit_train.errors import warn_user

from ._health import STEP_COLLAPSE, STEP_FLOOR, collapsed_steps, span

__all__ = ["WarmupCheck"]


class WarmupCheck(Callback):
    """Warns at step ``warmup_end`` when a chain's adapted step size collapsed.

    ``figures(carry)`` returns the chains' adapted step sizes and log densities (either
    ``None`` where the sampler's state has none) from the carry as callbacks see it.
    """

    primary_only = True

    def __init__(
        self,
        backend: str,
        warmup_end: int,
        figures: Callable[[Any], tuple[Any, Any]],
    ) -> None:
        self.backend = backend
        self.warmup_end = int(warmup_end)
        self.figures = figures

    def on_step_end(self, loop: Any, state: Any) -> None:
        if self.warmup_end <= 0 or state.step != self.warmup_end:
            return
        step_sizes, logdensity = self.figures(state.opt_state)
        if step_sizes is None:
            return
        step = np.asarray(step_sizes, dtype=float).reshape(-1)
        stuck = collapsed_steps(step)
        if not stuck:
            return
        others = [c for c in range(step.size) if c not in stuck]
        lp = None if logdensity is None else np.asarray(logdensity, dtype=float).reshape(-1)
        with_lp = lp is not None and lp.size == step.size
        said = []
        for c in stuck:
            text = f"chain {c}'s step size is {step[c]:.3g}"
            if with_lp:
                text += f" at log density {lp[c]:.6g}"  # type: ignore[index]
            said.append(text)
        if others:
            theirs = span([float(step[o]) for o in others])
            if with_lp:
                theirs += f" at {span([float(lp[o]) for o in others], '.6g')}"  # type: ignore[index]
            said.append(f"the other chains' {theirs}")
        warn_user(
            f"{self.backend}: at the end of warmup (step {self.warmup_end}) "
            f"{'; '.join(said)} (collapsed: below {STEP_FLOOR:g}, or {STEP_COLLAPSE:g} of the "
            "other chains'): warmup shrank the step to stay where the chain started, so it "
            "will not move while sampling and its draws will not be the posterior's. The run "
            "goes on; stop it now rather than sample, and start the chain elsewhere "
            "(backend_options.init_values, init_strategy 'screened'), or bound the prior "
            "where the density is flat far from the posterior"
        )
