"""The samplers' driver trace, regrouped by chain: one layout for every MCMC backend.

The MCMC backends (``numpyro-mcmc``, ``blackjax``) put each draw into the driver's
trace as ``sample__<site>`` (plus ``diverging``), with a chain axis after the draw
axis when there are several chains: ``(draws, chains, …)``, or ``(draws, …)`` for
one chain; their sampler statistics go in as :data:`STAT_KEYS`. ArviZ and
``NumpyroPredictiveOp`` want ``(chains, draws, …)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SAMPLE_PREFIX", "STAT_KEYS", "draws_by_chain"]

SAMPLE_PREFIX = "sample__"
#: The per-draw sampler statistics a backend may put into the trace, in ArviZ's names
#: (``InferenceData.sample_stats``): NUTS's tree depth, the Hamiltonian's energy (E-BFMI),
#: the step size, the leapfrog steps, the acceptance probability and the log density.
STAT_KEYS = ("diverging", "tree_depth", "energy", "step_size", "n_steps", "acceptance_rate", "lp")


def draws_by_chain(
    trace: dict[str, Any], num_chains: int
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Trace arrays ``(draws, [chains,] …)`` → samples and stats, ``(chains, draws, …)``."""

    def regroup(a: Any) -> np.ndarray:
        a = np.asarray(a)
        return np.swapaxes(a, 0, 1) if num_chains > 1 else a[None]

    samples = {
        k[len(SAMPLE_PREFIX) :]: regroup(v) for k, v in trace.items() if k.startswith(SAMPLE_PREFIX)
    }
    stats = {k: regroup(v) for k, v in trace.items() if k in STAT_KEYS}
    return samples, stats
