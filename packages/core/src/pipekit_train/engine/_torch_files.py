"""The torch-file checkpoint layout (the Lightning backend's), read without importing torch.

A committed step is ``<dir>/step-<step, 9 digits>.pt``, a ``torch.save`` of plain data
(``{"format": "pipekit-lightning", "version", "step", "module", "optimizer",
"scheduler", "ema", "meta": JSON text}``), with ``step-<step>.pt.crc32`` beside it: the
CRC-32 of the file's bytes (:mod:`pipekit_train._checksum`). Saves go through
``.tmp-step-*`` files renamed into place; quarantine renames a damaged step's pair
``*.corrupt``.

The meta is read from the file's pickle without torch: ``torch.save`` writes a zip whose
``data.pkl`` holds the structure and whose other entries hold the tensor bytes, so an
unpickler that stands a placeholder in for every ``torch`` name (and refuses every other
global but ``collections.OrderedDict``) gets the JSON text without touching an array.
So ``pipekit-train inspect`` lists a Lightning folder on any install, and fast. The arrays
are loaded with ``torch.load(weights_only=True)`` (:meth:`TorchFiles.load_payload`,
torch imported there), after the file's checksum matched.
"""

from __future__ import annotations

import io
import json
import pickle
import re
import zipfile
from pathlib import Path
from typing import Any, ClassVar

from .._checksum import ALGORITHM, ChecksumMismatch, bytes_checksum
from ._store import StepFiles, StepUnreadable

__all__ = ["TorchFiles", "FORMAT", "TMP_PREFIX", "SUM_SUFFIX", "is_torch_entry"]

FORMAT = "pipekit-lightning"
TMP_PREFIX = ".tmp-step-"
SUM_SUFFIX = "." + ALGORITHM

_NAME = re.compile(r"^step-(\d{9})\.pt$")
_ENTRY = re.compile(r"^step-(\d{9})\.pt(\.crc32)?(\.corrupt(\.\d+)?)?$")
_TMP = re.compile(r"^\.tmp-step-(\d{9})-")


def is_torch_entry(p: Path) -> bool:
    """A step file, its checksum record, or a quarantined one (not a save in progress)."""
    return p.is_file() and _ENTRY.match(p.name) is not None


class _Opaque:
    """Stands in for any torch object in a pickle read without torch (a tensor, a storage)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __setstate__(self, state: Any) -> None:
        pass


class _MetaUnpickler(pickle.Unpickler):
    """Reads ``data.pkl`` of a ``torch.save`` zip: torch names become :class:`_Opaque`."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "collections" and name == "OrderedDict":
            import collections

            return collections.OrderedDict
        if module == "torch" or module.startswith("torch."):
            return _Opaque
        raise pickle.UnpicklingError(f"global {module}.{name} is not allowed")

    def persistent_load(self, pid: Any) -> Any:
        return _Opaque()


def payload_without_arrays(raw: bytes) -> dict[str, Any]:
    """The dict a pipekit ``.pt`` file holds, tensors replaced by placeholders."""
    with zipfile.ZipFile(io.BytesIO(raw)) as zf:
        name = next((n for n in zf.namelist() if n.endswith("/data.pkl")), None)
        if name is None:
            raise ValueError("no data.pkl in the file (not a torch.save zip)")
        data = _MetaUnpickler(io.BytesIO(zf.read(name))).load()
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} checkpoint")
    return data


class TorchFiles(StepFiles):
    """A torch-file checkpoint folder as files: steps, checksums, meta, moves."""

    kind: ClassVar[str] = "torch-file"

    def committed_step(self, entry: Path) -> int | None:
        m = _NAME.match(entry.name)
        return int(m.group(1)) if m else None

    def path(self, step: int) -> Path:
        return self.directory / f"step-{step:09d}.pt"

    def checksum_path(self, step: int) -> Path:
        """The checksum record of step ``step``'s file (``step-<step>.pt.crc32``)."""
        return self.directory / f"step-{step:09d}.pt{SUM_SUFFIX}"

    def step_paths(self, step: int) -> list[Path]:
        return [self.path(step), self.checksum_path(step)]

    def owns(self, entry: Path) -> bool:
        return is_torch_entry(entry)

    def describe(self, step: int) -> str:
        return f"at step {step} in {self.directory} ({self.path(step).name})"

    # reading -------------------------------------------------------------------------
    def verified_bytes(self, step: int) -> bytes:
        """Step ``step``'s file, checked against its record (:class:`StepUnreadable` if not).

        A version-2 file without a record is damaged; a version-1 file (from before
        checksums) has none and is returned unverified.
        """
        try:
            raw = self.path(step).read_bytes()
        except OSError as e:
            raise StepUnreadable(f"cannot read it: {e}") from None
        self.verify_raw(step, raw)
        return raw

    def verify_raw(self, step: int, raw: bytes) -> None:
        """Check step ``step``'s file bytes against its record (:class:`StepUnreadable`)."""
        try:
            checked = self._verify(step, raw)
            if not checked:
                version = int(payload_without_arrays(raw).get("version", 1))
                if version >= 2:
                    raise ChecksumMismatch(
                        f"its checksum record {self.checksum_path(step).name} is missing"
                    )
        except ChecksumMismatch as e:
            raise StepUnreadable(str(e)) from None
        except Exception as e:
            raise StepUnreadable(f"{type(e).__name__}: {e}") from None

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

    def meta_from(self, raw: bytes) -> dict[str, Any]:
        """The meta of a file's bytes (:class:`StepUnreadable` if it cannot be read)."""
        try:
            meta = json.loads(payload_without_arrays(raw)["meta"])
            if not isinstance(meta, dict):
                raise ValueError(f"its meta is a {type(meta).__name__}, not a dict")
        except Exception as e:
            raise StepUnreadable(f"its meta is unreadable: {type(e).__name__}: {e}") from None
        return meta

    def read_meta(self, step: int) -> dict[str, Any]:
        return self.meta_from(self.verified_bytes(step))

    def load_payload(self, raw: bytes) -> dict[str, Any]:
        """The whole payload of verified file bytes (``torch.load(weights_only=True)``)."""
        try:
            import torch
        except ImportError as e:  # pragma: no cover - a torch-file folder without torch
            from ..errors import BackendNotInstalledError

            raise BackendNotInstalledError(
                f"reading the arrays of {self.directory} needs torch: "
                "pip install pipekit-train-lightning"
            ) from e
        try:
            data = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
            if not isinstance(data, dict) or data.get("format") != FORMAT:
                raise ValueError(f"not a {FORMAT} checkpoint")
        except Exception as e:
            raise StepUnreadable(f"{type(e).__name__}: {e}") from None
        return data

    # inspect -------------------------------------------------------------------------
    def check(self, step: int) -> tuple[dict[str, Any] | None, str | None]:
        """``(meta, error)`` of one committed step for ``inspect``: the whole file checked
        against its checksum (CRC-32 needs no torch), its meta read without torch."""
        try:
            raw = self.path(step).read_bytes()
        except OSError as e:
            return None, f"unreadable: {e}"
        meta: dict[str, Any] | None = None
        error: str | None = None
        try:
            meta = self.meta_from(raw)
        except StepUnreadable as e:
            error = str(e)
        try:
            self.verify_raw(step, raw)
        except StepUnreadable as e:
            error = error or str(e)
        return meta, error

    def entries(self) -> list[tuple[int, Path, str | None]]:
        """``(step, path, why not committed)`` of every step file, for ``inspect``."""
        out: list[tuple[int, Path, str | None]] = []
        for p in self.directory.iterdir():
            m = _ENTRY.match(p.name)
            if m and p.is_file() and not m.group(2):  # a record is shown with its file
                out.append((int(m.group(1)), p, "quarantined" if m.group(3) else None))
            t = _TMP.match(p.name)
            if t and p.is_file() and not p.name.endswith(SUM_SUFFIX):
                out.append((int(t.group(1)), p, "incomplete (unwritten)"))
        return sorted(out, key=lambda e: (e[0], e[1].name))
