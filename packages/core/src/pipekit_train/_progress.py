"""Helpers of ``ProgressBar``: when to draw a bar, and the plain line printed otherwise.

A bar (tqdm) only makes sense on a terminal. Under CI (the ``CI`` environment
variable, which GitHub Actions, GitLab and most CI services set) or when the
stream is a file or pipe, carriage-return redraws turn into noise, so the
progress bar prints one plain line per log step instead.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

__all__ = [
    "interactive",
    "bar_width",
    "describe",
    "format_metrics",
    "format_duration",
    "status_line",
]

_FALSE = ("", "0", "false", "no", "off")


def interactive(stream: Any) -> bool:
    """Whether ``stream`` is a terminal and no ``CI`` variable asks for plain output."""
    if os.environ.get("CI", "").strip().lower() not in _FALSE:
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


def bar_width(stream: Any) -> dict[str, Any]:
    """tqdm's width arguments: follow the terminal, or 100 columns when it reports none.

    A pseudo-terminal whose size was never set (``docker exec``, some CI
    runners) reports 0 columns, with which tqdm would draw nothing at all.
    """
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        columns = 0
    return {"dynamic_ncols": True} if columns > 0 else {"ncols": 100}


def describe(backend: str, phase: str | None) -> str:
    """``train[equinox]``, or the sampler's phase: ``warmup[numpyro-mcmc]``."""
    return f"{phase or 'train'}[{backend}]"


def format_metrics(metrics: Mapping[str, Any], limit: int = 6) -> dict[str, str]:
    """The first ``limit`` numeric metrics, four significant digits."""
    shown: dict[str, str] = {}
    for key, value in metrics.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        shown[key] = f"{value:.4g}"
        if len(shown) == limit:
            break
    return shown


def format_duration(seconds: float) -> str:
    """``42s``, ``3m05s``, ``2h07m``; ``?`` when unknown."""
    if not math.isfinite(seconds) or seconds < 0:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def status_line(
    desc: str, step: int, total: int, rate: float | None, metrics: Mapping[str, Any]
) -> str:
    """``train[equinox] step 100/1500 (7%) | 85.3 steps/s | ETA 16s | loss=0.1234``."""
    percent = 100.0 * step / total if total else 100.0
    parts = [f"{desc} step {step}/{total} ({percent:.0f}%)"]
    if rate is not None and rate > 0:
        parts.append(f"{rate:.3g} steps/s")
        parts.append(f"ETA {format_duration((total - step) / rate)}")
    shown = format_metrics(metrics)
    if shown:
        parts.append(" ".join(f"{k}={v}" for k, v in shown.items()))
    return " | ".join(parts)
