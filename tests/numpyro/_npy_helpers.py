"""Shared test support for the NumPyro backends: the posteriordb models and the criterion
(both live in ``tests/posterior_checks.py``, shared with the BlackJAX tests)."""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parents[1])  # also for the workers run as subprocesses
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from posterior_checks import criterion, param_values, pdb  # noqa: E402

__all__ = ["criterion", "param_values", "pdb"]
