"""Shared test support for the NumPyro backends: the posteriordb models and the criterion
(both live in ``tests/posterior_checks.py``, shared with the BlackJAX tests)."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])  # also for the workers run as subprocesses
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from typing import Any  # noqa: E402

from posterior_checks import criterion, param_values, pdb  # noqa: E402

__all__ = ["criterion", "mcmc_run_starts", "param_values", "pdb"]


def mcmc_run_starts(info: dict[str, Any]) -> dict[str, Any] | None:
    """A numpyro-mcmc run's chain starts as ``MCMC.run``'s ``init_params`` (given them, its
    draws are the backend's to the bit): unbatched for one chain; None where NumPyro's own
    init strategy chose them (``init_strategy`` other than ``"screened"``)."""
    starts = info["starts"]
    if starts is None or info["num_chains"] > 1:
        return starts
    return {k: v[0] for k, v in starts.items()}
