"""TensorBoard event files through tensorboardX (the ``[tensorboard]`` extra)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from ..errors import ConfigError


class TensorBoardWriter:
    """Write each metric as a scalar summary under ``logdir``.

    Events are written synchronously with tensorboardX's ``EventsWriter`` (the
    record writer behind its ``SummaryWriter``), so ``flush`` really puts every
    event written so far on disk; ``SummaryWriter`` hands events to a background
    thread that ``flush`` does not wait for. Each writer opens its own event file
    with a unique name: tensorboardX names files by the second and the host and
    opens them with ``"wb"``, so a resumed run in the same second would otherwise
    truncate the earlier file.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._writer: Any = None
        self._scalar: Any = None
        self._event: Any = None

    def _open(self) -> Any:
        if self._writer is None:
            try:
                from tensorboardX.event_file_writer import EventsWriter
                from tensorboardX.proto.event_pb2 import Event
                from tensorboardX.summary import scalar
            except ImportError as exc:
                raise ConfigError(
                    "metric_writer kind 'tensorboard' needs tensorboardX: "
                    "pip install 'pipekit-train-core[tensorboard]'",
                    field="metric_writer",
                ) from exc
            self.path.mkdir(parents=True, exist_ok=True)
            suffix = f".{os.getpid()}.{uuid.uuid4().hex[:8]}"
            self._writer = EventsWriter(str(self.path / "events"), suffix)
            self._scalar, self._event = scalar, Event
        return self._writer

    def write(self, step: int, metrics: dict[str, float]) -> None:
        writer = self._open()
        now = time.time()
        for key, value in metrics.items():
            summary = self._scalar(key, float(value))
            writer.write_event(self._event(wall_time=now, step=int(step), summary=summary))

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
