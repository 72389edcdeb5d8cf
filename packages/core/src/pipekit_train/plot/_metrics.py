"""Metric curves: training and ``val_`` series of each metric, and the learning rate.

One panel per metric — ``loss`` with ``val_loss`` on the same axes, ``accuracy``
with ``val_accuracy``, ``lr`` alone (log scale when it spans a decade or more) —
written as ``metrics.png`` (every panel) and one ``<metric>.png`` per panel.
matplotlib is imported only here, through its object-oriented API and the Agg
canvas: no pyplot, no change to the user's global backend.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ExtraNotInstalledError
from ._folder import RunFolder
from ._logs import MetricLogs, Series, find_metric_logs, read_metric_logs

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["MetricCurves", "metric_panels", "metric_figures"]

LEARNING_RATE = "lr"


def _figure_class() -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ExtraNotInstalledError(
            "plotting needs matplotlib: pip install 'pipekit-train-core[plot]'"
        ) from exc
    return Figure


def metric_panels(series: dict[str, Series]) -> dict[str, list[str]]:
    """Panel name → the series drawn in it: ``{"loss": ["loss", "val_loss"], "lr": ["lr"]}``.

    Training metrics come first in the order logged, then metrics seen only in
    validation, then the learning rate.
    """
    panels: dict[str, list[str]] = {}
    for name in series:
        if name == LEARNING_RATE:
            continue
        base = name.removeprefix("val_")
        panels.setdefault(base, [])
    for base, members in panels.items():
        members += [n for n in (base, f"val_{base}") if n in series]
    if LEARNING_RATE in series:
        panels[LEARNING_RATE] = [LEARNING_RATE]
    return panels


def _draw(ax: Axes, panel: str, names: list[str], series: dict[str, Series]) -> None:
    for name in names:
        steps = [s for s, _ in series[name]]
        values = [v for _, v in series[name]]
        style: dict[str, Any] = {"marker": "o", "markersize": 3} if len(steps) < 30 else {}
        ax.plot(steps, values, label="validation" if name.startswith("val_") else "train", **style)
    ax.set_xlabel("step")
    ax.set_ylabel("learning rate" if panel == LEARNING_RATE else panel)
    ax.set_title(panel)
    ax.grid(True, alpha=0.3)
    finite = [v for n in names for _, v in series[n] if v == v and abs(v) != float("inf")]
    if panel == LEARNING_RATE and finite and min(finite) > 0 and max(finite) >= 10 * min(finite):
        ax.set_yscale("log")
    if len(names) > 1 or names[0].startswith("val_"):
        ax.legend()


def metric_figures(series: dict[str, Series], title: str = "") -> dict[str, Figure]:
    """``{"metrics": overview, "<panel>": one figure per panel}``, labelled, not yet saved."""
    figure_cls = _figure_class()
    panels = metric_panels(series)
    figures: dict[str, Figure] = {}
    columns = min(2, len(panels))
    rows = -(-len(panels) // columns)
    overview = figure_cls(figsize=(6 * columns, 4 * rows), layout="constrained")
    for i, (panel, names) in enumerate(panels.items()):
        _draw(overview.add_subplot(rows, columns, i + 1), panel, names, series)
        single = figure_cls(figsize=(6, 4), layout="constrained")
        _draw(single.add_subplot(), panel, names, series)
        if title:
            single.suptitle(title)
        figures[panel] = single
    if title:
        overview.suptitle(title)
    return {"metrics": overview, **figures}


def _file_name(panel: str) -> str:
    return re.sub(r"[^\w.-]", "_", panel) + ".png"


class MetricCurves:
    """The core plotter: applies to any run folder with jsonl, csv or TensorBoard logs."""

    name = "metrics"

    def applies(self, run: RunFolder) -> bool:
        return find_metric_logs(run.run_dir) is not None

    def render(self, run: RunFolder) -> list[Path]:
        logs: MetricLogs = read_metric_logs(run.run_dir)
        figures = metric_figures(logs.series, title=run.run_dir.name)
        run.out_dir.mkdir(parents=True, exist_ok=True)
        written = []
        for panel, figure in figures.items():
            path = run.out_dir / ("metrics.png" if panel == "metrics" else _file_name(panel))
            figure.savefig(path, dpi=100)
            written.append(path)
        return written
