"""Pipekit checkpoints of a Lightning run: one file per step, written atomically.

A checkpoint is ``<checkpoint_dir>/step-<step, 9 digits>.pt``, a ``torch.save``
of plain data (loadable with ``torch.load(weights_only=True)``)::

    {"format": "pipekit-lightning", "version": 1, "step": int,
     "module": the nn.Module's state_dict, "optimizer": ..., "scheduler": ... or None,
     "ema": the averaged parameters (name -> tensor) with ema_decay, else None,
     "meta": JSON text: the CallbackRunner's checkpoint_meta, the fingerprint and
             the data position {"position": batches consumed}}

Written to a temporary file in the checkpoint folder itself (so the rename never
crosses a filesystem), flushed and fsynced, then ``os.replace``d onto its name and
the folder fsynced: a SIGKILL at any point leaves either the previous newest
checkpoint or the new one, never half a file. ``keep_last`` older files are
deleted only after the new one is in place. An unreadable newest file is renamed
``*.corrupt`` (never deleted) and the next newest is used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from pipekit_train.errors import CheckpointError
from pipekit_train.fingerprint import check_fingerprint

__all__ = ["Saved", "CheckpointStore"]

_NAME = re.compile(r"^step-(\d{9})\.pt$")
_TMP_PREFIX = ".tmp-step-"


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
            "version": 1,
            "step": int(step),
            "module": module,
            "optimizer": optimizer,
            "scheduler": scheduler,
            "ema": ema,
            "meta": json.dumps(meta, sort_keys=True),
        }
        fd, tmp = tempfile.mkstemp(prefix=_TMP_PREFIX, suffix=".pt", dir=self.dir)
        try:
            with os.fdopen(fd, "wb") as f:
                torch.save(payload, f)
                f.flush()
                os.fsync(f.fileno())
            final = self.path(step)
            os.replace(tmp, final)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        _fsync_dir(self.dir)
        if self.keep_last is not None:
            for old in self.steps()[: -self.keep_last]:
                self.path(old).unlink(missing_ok=True)
        return final

    def load(self, step: int) -> Saved:
        """Read checkpoint ``step`` (``weights_only=True``: plain data only, nothing unpickled)."""
        p = self.path(step)
        data = torch.load(p, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != "pipekit-lightning":
            raise ValueError("not a pipekit-lightning checkpoint")
        return Saved(
            step=int(data["step"]),
            module=data["module"],
            optimizer=data.get("optimizer"),
            scheduler=data.get("scheduler"),
            meta=json.loads(data["meta"]),
            path=p,
            ema=data.get("ema"),
        )

    def newest(self) -> Saved | None:
        """The newest readable checkpoint; unreadable newer ones are renamed ``*.corrupt``."""
        for step in reversed(self.steps()):
            try:
                return self.load(step)
            except Exception as exc:  # noqa: BLE001 - truncated / corrupted file
                bad = self.path(step)
                target = bad.with_name(bad.name + ".corrupt")
                warnings.warn(
                    f"checkpoint {bad} cannot be read ({type(exc).__name__}: {exc}); renamed "
                    f"to {target.name}, falling back to an older one",
                    stacklevel=2,
                )
                os.replace(bad, target)
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
            warnings.warn(message, stacklevel=2)
        return saved


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
