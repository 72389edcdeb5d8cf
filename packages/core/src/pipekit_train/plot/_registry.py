"""Plotters: what can be drawn from a run folder, keyed on what the folder holds.

A plotter says whether it ``applies`` to a run folder (the metric plotter: the
folder has metric logs; a sampler's trace plotter, later: the folder has
posterior samples) and ``render``s PNG files into an output folder. Core
registers the metric plotter and the sweep plotter (a sweep folder's study); a
backend distribution adds its own with an entry point in the
``pipekit_train.plotters`` group naming a ``Plotter`` object (or calls
``register_plotter``), so ``pipekit-train plot`` draws them without core knowing
the backend.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Protocol, runtime_checkable

from ._folder import RunFolder

__all__ = ["ENTRY_POINT_GROUP", "Plotter", "plotters", "register_plotter"]

ENTRY_POINT_GROUP = "pipekit_train.plotters"


@runtime_checkable
class Plotter(Protocol):
    """Draws one family of plots. ``name`` is unique; ``render`` returns the files written."""

    name: str

    def applies(self, run: RunFolder) -> bool: ...

    def render(self, run: RunFolder) -> list[Path]: ...


_REGISTERED: dict[str, Plotter] = {}


def register_plotter(plotter: Plotter) -> None:
    """Add (or replace, by ``name``) a plotter for this process."""
    _REGISTERED[plotter.name] = plotter


def plotters() -> list[Plotter]:
    """Core's plotters, then those registered in code, then entry-point ones, by name."""
    from ._metrics import MetricCurves
    from ._sweep import SweepPlots

    found: dict[str, Plotter] = {"metrics": MetricCurves(), "sweep": SweepPlots()}
    found.update(_REGISTERED)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in found:
            plotter = ep.load()
            found[ep.name] = plotter() if isinstance(plotter, type) else plotter
    return list(found.values())
