"""The samplers' driver trace, regrouped by chain: one layout for every MCMC backend.

The MCMC backends (``numpyro-mcmc``, ``blackjax``) put each draw into the driver's
trace as ``sample__<site>`` (plus ``diverging``), with a chain axis after the draw
axis when there are several chains: ``(draws, chains, …)``, or ``(draws, …)`` for
one chain. ArviZ and ``NumpyroPredictiveOp`` want ``(chains, draws, …)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SAMPLE_PREFIX", "draws_by_chain"]

SAMPLE_PREFIX = "sample__"


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
    stats = {k: regroup(v) for k, v in trace.items() if k == "diverging"}
    return samples, stats
