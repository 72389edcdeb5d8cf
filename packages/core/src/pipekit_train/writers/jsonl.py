"""A JSON-lines writer: one ``{"step": …, "time": …, **metrics}`` object per line."""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path
from typing import Any


class JsonlWriter:
    """Append metrics to ``path`` as JSON lines (directories created as needed).

    Non-finite floats are written as the strings ``"nan"``, ``"inf"``,
    ``"-inf"`` so that every line stays valid JSON.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._fh: Any = None

    def _open(self) -> Any:
        if self._fh is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = self.path.open("a", encoding="utf-8")
        return self._fh

    def write(self, step: int, metrics: dict[str, float]) -> None:
        row: dict[str, Any] = {"step": int(step), "time": time.time()}
        for key, value in metrics.items():
            value = float(value)
            row[key] = value if math.isfinite(value) else str(value)
        self._open().write(json.dumps(row) + "\n")

    def flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self.flush()
            self._fh.close()
            self._fh = None

    def to_config(self) -> dict[str, Any]:
        return {"kind": "jsonl", "path": str(self.path)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, JsonlWriter) and other.path == self.path

    def __repr__(self) -> str:
        return f"JsonlWriter({str(self.path)!r})"
