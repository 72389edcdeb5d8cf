"""TensorBoard event files through tensorboardX (the ``[tensorboard]`` extra)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..errors import ConfigError


class TensorBoardWriter:
    """Write each metric as a scalar summary under ``logdir``."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._writer: Any = None

    def _open(self) -> Any:
        if self._writer is None:
            try:
                from tensorboardX import SummaryWriter
            except ImportError as exc:
                raise ConfigError(
                    "metric_writer kind 'tensorboard' needs tensorboardX: "
                    "pip install 'pipekit-train-core[tensorboard]'",
                    field="metric_writer",
                ) from exc
            self._writer = SummaryWriter(logdir=str(self.path))
        return self._writer

    def write(self, step: int, metrics: dict[str, float]) -> None:
        writer = self._open()
        for key, value in metrics.items():
            writer.add_scalar(key, float(value), global_step=int(step))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def to_config(self) -> dict[str, Any]:
        return {"kind": "tensorboard", "path": str(self.path)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorBoardWriter) and other.path == self.path
