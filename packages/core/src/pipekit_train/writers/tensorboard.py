"""TensorBoard event files through tensorboardX (the ``[tensorboard]`` extra)."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from typing import Any

from ._extras import missing_library


class TensorBoardWriter:
    """Write each metric as a scalar summary under ``logdir``.

    Events are written synchronously with tensorboardX's ``EventsWriter`` (the
    record writer behind its ``SummaryWriter``), so ``flush`` really puts every
    event written so far on disk; ``SummaryWriter`` hands events to a background
    thread that ``flush`` does not wait for. Each writer opens its own event file
    with a unique name: tensorboardX names files by the second and the host and
    opens them with ``"wb"``, so a resumed run in the same second would otherwise
    truncate the earlier file.

    ``log_config`` records the loop's configuration for TensorBoard's HParams
    plugin (one session, its hyper-parameters the flattened config) and as YAML
    text in the Text plugin; ``log_info`` records run facts (backend, library
    versions) as text. ``close`` writes the HParams experiment, listing every
    metric written, and marks the session finished.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._writer: Any = None
        self._scalar: Any = None
        self._event: Any = None
        self._hparams: dict[str, Any] | None = None
        self._metric_names: set[str] = set()

    def _open(self) -> Any:
        if self._writer is None:
            try:
                from tensorboardX.event_file_writer import EventsWriter
                from tensorboardX.proto.event_pb2 import Event
                from tensorboardX.summary import scalar
            except ImportError as exc:
                raise missing_library("tensorboard") from exc
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
        self._metric_names.update(metrics)

    def _write_summary(self, summary: Any, step: int = 0) -> None:
        self._open().write_event(self._event(wall_time=time.time(), step=step, summary=summary))

    def log_config(self, config: dict[str, Any]) -> None:
        """The config as HParams (flattened keys) and as YAML text under ``pipekit/config``."""
        self._open()  # first: a missing tensorboardX is its ConfigError, not an ImportError
        import yaml
        from tensorboardX.summary import hparams, text

        from ._config import flatten

        self._hparams = dict(flatten(config))
        _, session_start, _ = hparams(self._hparams, {})
        self._write_summary(session_start)
        body = yaml.safe_dump(config, sort_keys=False, default_flow_style=False)
        self._write_summary(text("pipekit/config", "```yaml\n" + body + "```"))

    def log_info(self, info: dict[str, Any]) -> None:
        """Run facts (backend, versions, final step, …) as a text table under ``pipekit/info``."""
        self._open()
        from tensorboardX.summary import text

        from ._config import flatten

        rows = "\n".join(f"| {k} | {v} |" for k, v in flatten(info).items())
        self._write_summary(text("pipekit/info", "| key | value |\n|---|---|\n" + rows))

    def flush(self) -> None:
        if self._writer is not None:
            self._writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            if self._hparams is not None:
                from tensorboardX.summary import hparams

                names = {name: 0.0 for name in sorted(self._metric_names)}
                experiment, _, session_end = hparams(self._hparams, names)
                self._write_summary(experiment)
                self._write_summary(session_end)
                self._hparams = None
            self._writer.close()
            self._writer = None

    def to_config(self) -> dict[str, Any]:
        return {"kind": "tensorboard", "path": str(self.path)}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TensorBoardWriter) and other.path == self.path
