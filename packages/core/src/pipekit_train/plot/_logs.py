"""Find a run's metric logs and read them into per-metric series.

A run folder (``checkpoint_dir``, or ``runs/<backend>-<time>``) keeps the logs
of writers given by name under ``logs/<kind>`` (see ``pipekit_train.writers``).
The first kind found is read, in the order JSON lines, CSV, TensorBoard; a
folder that holds the files directly (``metrics.jsonl``, ``*.csv``, event files)
works too. Each metric becomes a list of ``(step, value)`` sorted by step; when
a step appears twice (a resumed run re-logs the steps after its last
checkpoint) the later value wins.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ExtraNotInstalledError, LogsNotFoundError

__all__ = ["Series", "MetricLogs", "find_metric_logs", "read_metric_logs"]

Series = list[tuple[int, float]]

_SKIP = {"step", "time"}


@dataclass
class MetricLogs:
    """The metrics of one run: ``series[name] = [(step, value), …]`` and where they came from."""

    kind: str
    sources: list[Path]
    series: dict[str, Series] = field(default_factory=dict)


def _event_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("events.out.tfevents.*")) if folder.is_dir() else []


def find_metric_logs(run_dir: Path) -> tuple[str, list[Path]] | None:
    """``(kind, files)`` of the first metric logs found in ``run_dir``, or ``None``."""
    logs = run_dir / "logs"
    candidates: list[tuple[str, list[Path]]] = [
        ("jsonl", sorted((logs / "jsonl").glob("*.jsonl"))),
        ("csv", sorted((logs / "csv").glob("*.csv"))),
        ("tensorboard", _event_files(logs / "tensorboard")),
        ("jsonl", sorted(run_dir.glob("*.jsonl"))),
        ("csv", sorted(run_dir.glob("*.csv"))),
        ("tensorboard", _event_files(run_dir)),
    ]
    for kind, files in candidates:
        if files:
            return kind, files
    return None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        number = float(value)  # type: ignore[arg-type]  # "nan" / "inf" strings included
    except (TypeError, ValueError):
        return None
    return number


def _add(table: dict[str, dict[int, float]], step: int, name: str, value: object) -> None:
    number = _number(value)
    if number is not None:
        table.setdefault(name, {})[step] = number


def _read_rows(kind: str, path: Path, table: dict[str, dict[int, float]]) -> None:
    with path.open(encoding="utf-8", newline="") as fh:
        if kind == "jsonl":
            rows = (json.loads(line) for line in fh if line.strip())
        else:
            rows = csv.DictReader(fh)  # type: ignore[assignment]
        for row in rows:
            step = _number(row.get("step"))
            if step is None or not math.isfinite(step):
                continue
            for name, value in row.items():
                if name not in _SKIP:
                    _add(table, int(step), name, value)


def _read_tensorboard(folder: Path, table: dict[str, dict[int, float]]) -> None:
    try:
        from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    except ImportError as exc:
        raise ExtraNotInstalledError(
            f"reading the TensorBoard logs in {str(folder)!r} needs the tensorboard package: "
            "pip install tensorboard (or log with metric_writer: [tensorboard, jsonl] so the "
            "plot can read the JSON lines)"
        ) from exc
    accumulator = EventAccumulator(str(folder), size_guidance={"scalars": 0})
    accumulator.Reload()
    for name in accumulator.Tags().get("scalars", []):
        for event in accumulator.Scalars(name):  # in file order: later values win
            table.setdefault(name, {})[int(event.step)] = float(event.value)


def _runs_inside(folder: Path) -> list[str]:
    """Sub-folders holding metric logs, newest first (``runs/`` given instead of a run)."""
    runs = [p for p in folder.iterdir() if p.is_dir() and find_metric_logs(p) is not None]
    runs.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return [str(p) for p in runs]


def read_metric_logs(run_dir: str | Path) -> MetricLogs:
    """Read the metric logs of ``run_dir``; ``LogsNotFoundError`` when there are none."""
    folder = Path(run_dir)
    if not folder.is_dir():
        raise LogsNotFoundError(
            f"RUN_DIR {str(folder)!r} is not a folder; give the run's folder (its "
            "checkpoint_dir, or runs/<backend>-<time> for a run without one)"
        )
    found = find_metric_logs(folder)
    if found is None:
        runs = _runs_inside(folder)
        hint = (
            f" It holds run folders with logs: {', '.join(runs[:5])}"
            + (", …" if len(runs) > 5 else "")
            + "; give one of them."
            if runs
            else ""
        )
        raise LogsNotFoundError(
            f"RUN_DIR {str(folder)!r} holds no metric logs (looked for logs/jsonl/*.jsonl, "
            "logs/csv/*.csv, logs/tensorboard/events.out.tfevents.* and the same files in the "
            "folder itself). Train with metric_writer: jsonl (or csv, tensorboard) so the run "
            "writes them, or give the folder that holds them." + hint
        )
    kind, files = found
    table: dict[str, dict[int, float]] = {}
    if kind == "tensorboard":
        _read_tensorboard(files[0].parent, table)
    else:
        for path in files:
            _read_rows(kind, path, table)
    series = {name: sorted(points.items()) for name, points in table.items() if points}
    if not series:
        raise LogsNotFoundError(
            f"RUN_DIR {str(folder)!r}: the {kind} logs ({', '.join(str(f) for f in files)}) "
            "hold no metric values yet; plot again after the first log step "
            "(log_every_n_steps)"
        )
    return MetricLogs(kind=kind, sources=files, series=series)
