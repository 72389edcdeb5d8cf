"""Plots of a run: ``plot(run_dir)`` in Python, ``pipekit-train plot RUN_DIR`` in a shell.

Reads the logs the run's writers left in its folder (``<run folder>/logs/<kind>``,
see ``pipekit_train.writers``) and writes PNG files, by default into
``<run folder>/plots``. Core draws the metric curves (training and ``val_``
series, the learning rate); backends add plotters for what their runs leave
behind (``register_plotter`` or the ``pipekit_train.plotters`` entry-point
group). matplotlib (the ``[plot]`` extra) is imported only when drawing, so
importing this module stays free of any array library.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ConfigError, LogsNotFoundError
from ._folder import RunFolder
from ._logs import MetricLogs, Series, find_metric_logs, read_metric_logs
from ._registry import ENTRY_POINT_GROUP, Plotter, plotters, register_plotter

__all__ = [
    "plot",
    "run_dir_of",
    "Plotter",
    "RunFolder",
    "register_plotter",
    "plotters",
    "ENTRY_POINT_GROUP",
    "MetricLogs",
    "Series",
    "find_metric_logs",
    "read_metric_logs",
]

PLOTS_DIR = "plots"


def run_dir_of(source: Any) -> Path:
    """The run folder named by ``source``: a path, a ``TrainingLoop`` or a ``backend_info``.

    A loop names its ``checkpoint_dir``; a ``backend_info`` mapping its ``run_dir``
    (or ``checkpoint_dir``) entry.
    """
    if isinstance(source, (str, os.PathLike)):
        return Path(source)
    if isinstance(source, Mapping):
        for key in ("run_dir", "checkpoint_dir"):
            if source.get(key):
                return Path(source[key])
        raise ConfigError(
            "plot: this backend_info has no 'run_dir'; give the run folder as a path",
            field="run_dir",
        )
    checkpoint_dir = getattr(source, "checkpoint_dir", None)
    if hasattr(source, "metric_writer"):
        if checkpoint_dir is None:
            raise ConfigError(
                "plot: the loop has no checkpoint_dir, so its logs went to a new "
                "runs/<backend>-<time> folder; give that folder as a path",
                field="run_dir",
            )
        return Path(checkpoint_dir)
    raise ConfigError(
        f"plot: expected a run folder path, a TrainingLoop or backend_info, got "
        f"{type(source).__name__}",
        field="run_dir",
    )


def plot(source: Any, out: str | os.PathLike[str] | None = None) -> list[Path]:
    """Write every plot that applies to the run folder ``source``; return the PNG paths.

    ``out`` defaults to ``<run folder>/plots``. Raises ``LogsNotFoundError`` when
    nothing in the folder can be plotted and ``ExtraNotInstalledError`` without
    matplotlib.
    """
    run_dir = run_dir_of(source)
    run = RunFolder(run_dir=run_dir, out_dir=Path(out) if out is not None else run_dir / PLOTS_DIR)
    if not run_dir.is_dir():
        raise LogsNotFoundError(
            f"RUN_DIR {str(run_dir)!r} is not a folder; give the run's folder (its "
            "checkpoint_dir, or runs/<backend>-<time> for a run without one)"
        )
    chosen = [p for p in plotters() if p.applies(run)]
    if not chosen:
        read_metric_logs(run_dir)  # raises LogsNotFoundError saying where it looked
    written: list[Path] = []
    for plotter in chosen:
        written += plotter.render(run)
    return written
