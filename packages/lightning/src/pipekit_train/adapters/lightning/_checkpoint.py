"""Pipekit checkpoints of a Lightning run: the torch-file store, one file per step.

A checkpoint is ``<checkpoint_dir>/step-<step, 9 digits>.pt``, a ``torch.save``
of plain data (loadable with ``torch.load(weights_only=True)``)::

    {"format": "pipekit-lightning", "version": 2, "step": int,
     "module": the nn.Module's state_dict, "optimizer": ..., "scheduler": ... or None,
     "ema": the averaged parameters (name -> tensor) with ema_decay, else None,
     "meta": JSON text: the CallbackRunner's checkpoint_meta, the fingerprint and
             the data position {"position": batches consumed}}

Beside it, ``step-<step>.pt.crc32`` records the CRC-32 of the file's bytes
(:mod:`pipekit_train._checksum`, JSON ``{"algorithm", "crc32", "bytes"}``); a load
checks it before ``torch.load`` reads anything, so a damaged byte is caught even where
the unpickler would have read a wrong value without complaint. A version-2 file
without its record is damaged; a version-1 file (written before checksums) loads
unverified.

This module holds the mechanics only: the atomic write and the load into a
:class:`Saved`. The layout (names, checksum check, the meta read without torch,
quarantine and archive moves) is core's ``pipekit_train.engine._torch_files``, so
``pipekit-train inspect`` reads these folders on any install; which step a run resumes
from is core's policy (``pipekit_train.engine.resume_from_store``).

Written to a temporary file in the checkpoint folder itself (so the rename never
crosses a filesystem), flushed and fsynced, then ``os.replace``d onto its name and
the folder fsynced: a SIGKILL at any point leaves either the previous newest
checkpoint or the new one, never half a file. The checksum record is put in place
(the same way) before the file, so a committed file always has its record.
``keep_last`` older files are deleted only after the new one is in place.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import torch

from pipekit_train.engine import CHECKSUM_ALGORITHM as ALGORITHM
from pipekit_train.engine import TORCH_FORMAT as FORMAT
from pipekit_train.engine import TORCH_SUM_SUFFIX as SUM_SUFFIX
from pipekit_train.engine import TORCH_TMP_PREFIX as TMP_PREFIX
from pipekit_train.engine import TorchFiles, bytes_checksum, ensure_writable

__all__ = ["Saved", "TorchFileStore"]

_VERSION = 2  # 2: every file has a checksum record beside it


@dataclass
class Saved:
    """A restored checkpoint."""

    step: int
    module: dict[str, Any]
    optimizer: dict[str, Any] | None
    scheduler: dict[str, Any] | None
    meta: dict[str, Any]
    path: Path
    ema: dict[str, Any] | None = None


class TorchFileStore(TorchFiles):
    """The checkpoint folder of one Lightning run: save (atomically, pruned) and load steps.

    ``save``'s ``state`` is ``{"module", "optimizer", "scheduler", "ema"}`` (state dicts;
    all but ``module`` may be ``None``); Lightning runs have no trace.
    """

    kind: ClassVar[str] = "torch-file"

    def __init__(self, directory: str | os.PathLike[str], keep_last: int | None) -> None:
        super().__init__(directory)
        self.keep_last = keep_last
        #: The loop's plain-config digest, written into every meta (``engine._preflight``).
        self.config_digest: str | None = None
        ensure_writable(self.directory)
        for stale in self.directory.glob(TMP_PREFIX + "*"):  # a save cut short by a kill
            stale.unlink(missing_ok=True)
        for record in self.directory.glob("step-*.pt" + SUM_SUFFIX):  # its file never committed
            if not record.with_suffix("").exists():
                record.unlink(missing_ok=True)
        self._verified: tuple[int, bytes] | None = None

    def save(
        self,
        step: int,
        state: Mapping[str, Any],
        meta: Mapping[str, Any],
        trace: Mapping[str, Any] | None = None,
    ) -> Path:
        """Write one checkpoint atomically, then drop the oldest beyond ``keep_last``."""
        if trace:
            raise ValueError("the torch-file store keeps no trace")
        payload = {
            "format": FORMAT,
            "version": _VERSION,
            "step": int(step),
            "module": state["module"],
            "optimizer": state.get("optimizer"),
            "scheduler": state.get("scheduler"),
            "ema": state.get("ema"),
            "meta": json.dumps(
                {
                    **dict(meta),
                    **({"config_digest": self.config_digest} if self.config_digest else {}),
                },
                sort_keys=True,
            ),
        }
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        data = buffer.getbuffer()
        record = {"algorithm": ALGORITHM, ALGORITHM: bytes_checksum(data), "bytes": len(data)}
        final = self.path(step)
        prefix = f"{TMP_PREFIX}{int(step):09d}-"
        _write_atomically(
            self.directory, self.checksum_path(step), json.dumps(record).encode(), prefix
        )
        _write_atomically(self.directory, final, data, prefix)
        _fsync_dir(self.directory)
        if self.keep_last is not None:
            for old in self.steps()[: -self.keep_last]:
                self.path(old).unlink(missing_ok=True)
                self.checksum_path(old).unlink(missing_ok=True)
        return final

    def read_meta(self, step: int) -> dict[str, Any]:
        """The meta of step ``step`` after its file matched its checksum (kept for ``load``)."""
        raw = self.verified_bytes(step)
        self._verified = (step, raw)
        return self.meta_from(raw)

    def load(self, step: int, template: Any = None) -> Saved:
        """Read checkpoint ``step`` (``weights_only=True``: plain data only, nothing unpickled);
        its checksum is checked first (``StepUnreadable`` if it differs)."""
        if self._verified is not None and self._verified[0] == step:
            raw = self._verified[1]
        else:
            raw = self.verified_bytes(step)
        self._verified = None
        data = self.load_payload(raw)
        return Saved(
            step=int(data["step"]),
            module=data["module"],
            optimizer=data.get("optimizer"),
            scheduler=data.get("scheduler"),
            meta=json.loads(data["meta"]),
            path=self.path(step),
            ema=data.get("ema"),
        )


def _write_atomically(
    directory: Path, final: Path, data: bytes | memoryview, prefix: str = TMP_PREFIX
) -> None:
    """Write ``data`` to a temporary file in ``directory``, fsync it, rename it to ``final``."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=final.suffix, dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
