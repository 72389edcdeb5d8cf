"""A CSV writer; columns are the union of metric names, rewritten when new ones appear."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any


class CsvWriter:
    """Keep rows in memory and rewrite ``path`` on ``flush`` (small logs only).

    Rows already in an existing file are kept (a resumed run appends, as the JSON
    lines writer does).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._rows: list[dict[str, Any]] = []
        self._loaded = False

    def _load_existing(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if not self.path.is_file():
            return
        with self.path.open(newline="", encoding="utf-8") as fh:
            old = [
                {k: (int(v) if k == "step" else float(v)) for k, v in row.items() if v}
                for row in csv.DictReader(fh)
            ]
        self._rows[:0] = old

    def write(self, step: int, metrics: dict[str, float]) -> None:
        self._load_existing()
        self._rows.append({"step": int(step), **{k: float(v) for k, v in metrics.items()}})

    def flush(self) -> None:
        self._load_existing()
        columns: list[str] = ["step"]
        for row in self._rows:
            columns += [k for k in row if k not in columns]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=columns)
            writer.writeheader()
            writer.writerows(self._rows)
        os.replace(tmp, self.path)

    def close(self) -> None:
        self.flush()

    def to_config(self) -> dict[str, Any]:
        return {"kind": "csv", "path": str(self.path)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CsvWriter) and other.path == self.path
