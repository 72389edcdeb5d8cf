"""Pipekit checkpoints of a Lightning run: one file per step, written atomically.

A checkpoint is ``<checkpoint_dir>/step-<step, 9 digits>.pt``, a ``torch.save``
of plain data (loadable with ``torch.load(weights_only=True)``)::

    {"format": "pipekit-lightning", "version": 2, "step": int,
     "module": the nn.Module's state_dict, "optimizer": ..., "scheduler": ... or None,
     "ema": the averaged parameters (name -> tensor) with ema_decay, else None,
     "meta": JSON text: the CallbackRunner's checkpoint_meta, the fingerprint and
             the data position {"position": batches consumed}}

Beside it, ``step-<step>.pt.crc32`` records the CRC-32 of the file's bytes
(:mod:`pipekit_train._checksum`, JSON ``{"algorithm", "crc32", "bytes"}``); restore
checks it before ``torch.load`` reads anything, so a damaged byte is caught even where
the unpickler would have read a wrong value without complaint. A version-2 file
without its record is damaged; a version-1 file (written before checksums) loads
unverified.

Written to a temporary file in the checkpoint folder itself (so the rename never
crosses a filesystem), flushed and fsynced, then ``os.replace``d onto its name and
the folder fsynced: a SIGKILL at any point leaves either the previous newest
checkpoint or the new one, never half a file. The checksum record is put in place
(the same way) before the file, so a committed file always has its record.
``keep_last`` older files are deleted only after the new one is in place. An
unreadable newest file, or one whose checksum differs, is renamed ``*.corrupt``
with its record (never deleted) and the next newest is used.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pipekit_train._checksum import ALGORITHM, ChecksumMismatch, bytes_checksum
from pipekit_train._warn import warn_user
from pipekit_train.errors import CheckpointError
from pipekit_train.fingerprint import check_fingerprint

__all__ = ["Saved", "CheckpointStore"]

_NAME = re.compile(r"^step-(\d{9})\.pt$")
_TMP_PREFIX = ".tmp-step-"
_VERSION = 2  # 2: every file has a checksum record beside it
_SUM_SUFFIX = "." + ALGORITHM


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


class CheckpointStore:
    """The checkpoint folder of one run: save, prune, find and restore the newest valid one."""

    def __init__(self, directory: str | os.PathLike[str], keep_last: int | None) -> None:
        self.dir = Path(directory)
        self.keep_last = keep_last
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(
                f"TrainingLoop.checkpoint_dir {str(self.dir)!r} cannot be created: "
                f"{exc.strerror or exc}; give a writable folder"
            ) from exc
        if not os.access(self.dir, os.W_OK):
            raise CheckpointError(
                f"TrainingLoop.checkpoint_dir {str(self.dir)!r} is not writable; give a "
                f"writable folder"
            )
        for stale in self.dir.glob(_TMP_PREFIX + "*"):  # a save cut short by a kill
            stale.unlink(missing_ok=True)
        for record in self.dir.glob("step-*.pt" + _SUM_SUFFIX):  # its file never committed
            if not record.with_suffix("").exists():
                record.unlink(missing_ok=True)

    def steps(self) -> list[int]:
        """Steps of the committed checkpoints, oldest first."""
        found = []
        for p in self.dir.iterdir():
            m = _NAME.match(p.name)
            if m:
                found.append(int(m.group(1)))
        return sorted(found)

    def path(self, step: int) -> Path:
        return self.dir / f"step-{step:09d}.pt"

    def checksum_path(self, step: int) -> Path:
        """The checksum record of step ``step``'s file (``step-<step>.pt.crc32``)."""
        return self.dir / f"step-{step:09d}.pt{_SUM_SUFFIX}"

    def save(
        self,
        step: int,
        module: dict[str, Any],
        optimizer: dict[str, Any] | None,
        scheduler: dict[str, Any] | None,
        meta: dict[str, Any],
        ema: dict[str, Any] | None = None,
    ) -> Path:
        """Write one checkpoint atomically, then drop the oldest beyond ``keep_last``."""
        payload = {
            "format": "pipekit-lightning",
            "version": _VERSION,
            "step": int(step),
            "module": module,
            "optimizer": optimizer,
            "scheduler": scheduler,
            "ema": ema,
            "meta": json.dumps(meta, sort_keys=True),
        }
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        data = buffer.getbuffer()
        record = {"algorithm": ALGORITHM, ALGORITHM: bytes_checksum(data), "bytes": len(data)}
        final = self.path(step)
        _write_atomically(self.dir, self.checksum_path(step), json.dumps(record).encode())
        _write_atomically(self.dir, final, data)
        _fsync_dir(self.dir)
        if self.keep_last is not None:
            for old in self.steps()[: -self.keep_last]:
                self.path(old).unlink(missing_ok=True)
                self.checksum_path(old).unlink(missing_ok=True)
        return final

    def load(self, step: int) -> Saved:
        """Read checkpoint ``step`` (``weights_only=True``: plain data only, nothing unpickled)."""
        p = self.path(step)
        raw = p.read_bytes()
        checked = self._verify(step, raw)
        data = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != "pipekit-lightning":
            raise ValueError("not a pipekit-lightning checkpoint")
        if not checked and int(data.get("version", 1)) >= 2:
            raise ChecksumMismatch(
                f"its checksum record {self.checksum_path(step).name} is missing"
            )
        return Saved(
            step=int(data["step"]),
            module=data["module"],
            optimizer=data.get("optimizer"),
            scheduler=data.get("scheduler"),
            meta=json.loads(data["meta"]),
            path=p,
            ema=data.get("ema"),
        )

    def _verify(self, step: int, raw: bytes) -> bool:
        """Check ``raw`` (step ``step``'s file) against its record; False if it has none."""
        record_path = self.checksum_path(step)
        if not record_path.exists():
            return False
        try:
            record = json.loads(record_path.read_text())
            want = int(record[ALGORITHM])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ChecksumMismatch(
                f"its checksum record {record_path.name} is unreadable: {exc}"
            ) from None
        got = bytes_checksum(raw)
        if got != want:
            raise ChecksumMismatch(
                f"checksum mismatch: {ALGORITHM} {got:08x} read back, {want:08x} when it was "
                f"saved ({len(raw)} bytes, {record.get('bytes')} saved)"
            )
        return True

    def newest(self) -> Saved | None:
        """The newest readable checkpoint whose checksum matches; newer ones that are
        unreadable or damaged are renamed ``*.corrupt`` (with their checksum record)."""
        for step in reversed(self.steps()):
            try:
                return self.load(step)
            except Exception as exc:  # noqa: BLE001 - truncated / corrupted file
                bad = self.path(step)
                target = bad.with_name(bad.name + ".corrupt")
                warn_user(
                    f"checkpoint step {step} ({bad}) cannot be used ({type(exc).__name__}: "
                    f"{exc}); renamed to {target.name}, falling back to an older one"
                )
                os.replace(bad, target)
                record = self.checksum_path(step)
                if record.exists():
                    os.replace(record, record.with_name(record.name + ".corrupt"))
        return None

    def archive(self) -> Path | None:
        """Move every checkpoint into ``archived-<UTC time>/`` (``resume="never"``)."""
        steps = self.steps()
        if not steps:
            return None
        target = self.dir / time.strftime("archived-%Y%m%dT%H%M%SZ", time.gmtime())
        target.mkdir(exist_ok=True)
        for step in steps:
            shutil.move(str(self.path(step)), target / self.path(step).name)
            record = self.checksum_path(step)
            if record.exists():
                shutil.move(str(record), target / record.name)
        return target

    def resume(self, fingerprint: dict[str, Any], mode: str) -> Saved | None:
        """The checkpoint to resume from under the resume guard, or ``None`` to start fresh."""
        if mode == "never":
            self.archive()
            return None
        saved = self.newest()
        if saved is None:
            return None
        message = check_fingerprint(
            saved.meta.get("fingerprint", {}), fingerprint, resume=mode, where=str(saved.path)
        )
        if message is not None:
            warn_user(message)
        return saved


def _write_atomically(directory: Path, final: Path, data: bytes | memoryview) -> None:
    """Write ``data`` to a temporary file in ``directory``, fsync it, rename it to ``final``."""
    fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=final.suffix, dir=directory)
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
