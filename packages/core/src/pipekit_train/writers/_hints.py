"""How to look at what a run's writers wrote: the lines an end-of-run summary prints.

A new user's run leaves TensorBoard event files, an MLflow database, JSON lines or CSV in
its run folder; each needs a different command to open. ``viewing_hints`` turns the
loop's ``metric_writer`` (or writer objects) into those commands, computed from the
writers' locations without opening, creating or importing anything, so the CLI and
notebooks can print them after any run.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from ._extras import tracking_scheme

__all__ = ["viewing_hints"]

_PLOTTABLE = ("jsonl", "csv", "tensorboard")  # what pipekit-train plot reads


def _locations(source: Any, run_dir: Path | None) -> list[tuple[str, str]]:
    """``(kind, location)`` of each writer ``source`` names; unplaceable ones are left out."""
    from ._base import MetricWriter
    from ._multi import MultiWriter
    from ._resolve import _LOCATION_KEY, _items, _normalise, default_location

    if isinstance(source, MultiWriter):
        return [loc for w in source.writers for loc in _locations(w, run_dir)]
    if isinstance(source, MetricWriter) and not isinstance(source, dict):
        to_config = getattr(source, "to_config", None)
        config = to_config() if callable(to_config) else {}
        kind = config.get("kind") if isinstance(config, dict) else None
        if kind in _LOCATION_KEY and config.get(_LOCATION_KEY[kind]):
            return [(kind, str(config[_LOCATION_KEY[kind]]))]
        return []
    if isinstance(source, (list, tuple)) and any(isinstance(w, MultiWriter) for w in source):
        return [loc for w in source for loc in _locations(w, run_dir)]
    out: list[tuple[str, str]] = []
    for name, item in _items(source):
        normal = _normalise(item, name)
        if not isinstance(normal, dict):
            out += _locations(normal, run_dir)
            continue
        kind = normal["kind"]
        location = normal.get(_LOCATION_KEY[kind])
        if location is None and run_dir is not None:
            location = default_location(kind, run_dir)
        if location is not None:
            out.append((kind, str(location)))
    return out


def _mlflow_line(uri: str) -> str:
    scheme = tracking_scheme(uri)
    if scheme in ("http", "https"):
        return f"MLflow: open {uri} (the tracking server's own UI)"
    if scheme in ("", "file") or scheme.split("+")[0] in ("sqlite", "postgresql", "mysql"):
        prefix = "MLFLOW_ALLOW_FILE_STORE=true " if scheme in ("", "file") else ""
        return (
            f"MLflow: {prefix}mlflow ui --backend-store-uri {shlex.quote(uri)}"
            "  (the UI needs the full package: pip install mlflow)"
        )
    return f"MLflow: tracking URI {uri}"


def viewing_hints(source: Any, run_dir: str | os.PathLike[str] | None = None) -> list[str]:
    """The commands that show what the writers of ``source`` wrote, one line each.

    ``source`` is a ``TrainingLoop`` (its ``metric_writer``), a ``metric_writer``
    value (``"tensorboard"``, ``["jsonl", "mlflow"]``, ``{kind: …}``), a writer
    object (``TensorBoardWriter``, ``MultiWriter``, …) or a list of these. ``run_dir``
    is the run folder (``backend_info["run_dir"]``); for a loop it defaults to its
    ``checkpoint_dir``. Writers named without a location are placed there, as
    ``resolve_writers`` places them; without a run folder they are left out.

    Lines, in the writers' order, then the plot line::

        TensorBoard: tensorboard --logdir runs/x/logs/tensorboard  (pip install tensorboard)
        MLflow: mlflow ui --backend-store-uri sqlite:////abs/runs/x/logs/mlflow/mlflow.db  (…)
        JSON lines: runs/x/logs/jsonl/metrics.jsonl
        CSV: runs/x/logs/csv/metrics.csv
        Plots: pipekit-train plot runs/x  (PNG files in runs/x/plots)

    The plot line appears when a JSON lines, CSV or TensorBoard writer writes under
    ``<run_dir>/logs``, which is where ``pipekit-train plot`` reads. Nothing is opened,
    created or imported; a writer of another type (a user's ``MetricWriter``) adds no
    line. Duplicates are dropped.
    """
    if hasattr(source, "metric_writer"):  # a TrainingLoop (read, not imported: no circle)
        if run_dir is None and source.checkpoint_dir is not None:
            run_dir = source.checkpoint_dir
        source = source.metric_writer
    folder = Path(run_dir) if run_dir is not None else None
    lines: list[str] = []
    plottable = False
    for kind, location in _locations(source, folder):
        if kind == "tensorboard":
            lines.append(
                f"TensorBoard: tensorboard --logdir {shlex.quote(location)}"
                "  (pip install tensorboard)"
            )
        elif kind == "mlflow":
            lines.append(_mlflow_line(location))
        elif kind == "jsonl":
            lines.append(f"JSON lines: {location}")
        elif kind == "csv":
            lines.append(f"CSV: {location}")
        if kind in _PLOTTABLE and folder is not None:
            logs = (folder / "logs").absolute()
            plottable = plottable or Path(location).absolute().is_relative_to(logs)
    if plottable and folder is not None:
        lines.append(
            f"Plots: pipekit-train plot {shlex.quote(str(folder))}"
            f"  (PNG files in {folder / 'plots'})"
        )
    return list(dict.fromkeys(lines))
