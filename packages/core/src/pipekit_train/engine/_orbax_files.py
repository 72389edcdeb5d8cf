"""The Orbax step-folder layout, read without jax or Orbax.

A committed step is a folder named by its step number, ``<dir>/<step>/``, holding the
items ``state`` (arrays), ``meta`` (JSON, ``meta/metadata``), ``checksums``
(``process_<i>.json``: CRC-32 records of the arrays and of the meta) and, for samplers,
``trace``. Orbax writes a step as ``<step>.orbax-checkpoint-tmp*`` and renames it when it
commits; quarantine renames a damaged one ``<step>.corrupt``. Reading the JSON here lets
``pipekit-train inspect`` list an Orbax folder (Equinox, NumPyro, BlackJAX, Keras) without
importing jax; ``pipekit_train.jax.checkpoint.Checkpointer`` adds the save and restore.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from .._checksum import ALGORITHM, ChecksumMismatch, json_checksum
from ._store import StepFiles, StepUnreadable

__all__ = ["OrbaxFiles", "CHECKSUM_ITEM", "read_records", "is_orbax_entry"]

#: The name of the checksum item in a step folder.
CHECKSUM_ITEM = "checksums"

_TMP = ".orbax-checkpoint-tmp"


def is_orbax_entry(p: Path) -> bool:
    """A committed step folder, an unfinalised one, or a quarantined one."""
    name = p.name
    head = name.split(".", 1)[0]
    return p.is_dir() and head.isdigit() and (name == head or _TMP in name or ".corrupt" in name)


def read_records(step_dir: Path, expected: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Every process's records of a step merged: ``{"meta": crc, "arrays": {name: [piece]}}``.

    ``None`` when the step has no checksum item and ``expected`` (the meta's marker) is
    ``None``: a step from before checksums. Raises :class:`ChecksumMismatch` when the
    record is missing, unreadable or incomplete for a step that should have one.
    """
    folder = step_dir / CHECKSUM_ITEM
    if not folder.is_dir():
        if expected is None:
            return None
        raise ChecksumMismatch(f"its {CHECKSUM_ITEM} record is missing")
    files = sorted(folder.glob("process_*.json"))
    want = int(expected.get("processes", 1)) if expected is not None else None
    if not files or (want is not None and len(files) != want):
        raise ChecksumMismatch(
            f"its {CHECKSUM_ITEM} record holds {len(files)} process files, expected "
            f"{want or 'some'}"
        )
    merged: dict[str, Any] = {"meta": None, "arrays": {}}
    for f in files:
        try:
            record = json.loads(f.read_text())
            if record.get("algorithm") != ALGORITHM:
                raise ValueError(f"algorithm {record.get('algorithm')!r}, not {ALGORITHM!r}")
            if record.get("meta") is not None:
                merged["meta"] = int(record["meta"])
            for name, pieces in record["arrays"].items():
                merged["arrays"].setdefault(name, []).extend(pieces)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            raise ChecksumMismatch(
                f"its {CHECKSUM_ITEM} record {f.name} is unreadable: {type(e).__name__}: {e}"
            ) from None
    return merged


class OrbaxFiles(StepFiles):
    """An Orbax checkpoint folder as files: steps, meta, checksum records, moves."""

    kind: ClassVar[str] = "orbax"

    def committed_step(self, entry: Path) -> int | None:
        return int(entry.name) if entry.name.isdigit() and entry.is_dir() else None

    def step_paths(self, step: int) -> list[Path]:
        return [self.directory / str(step)]

    def owns(self, entry: Path) -> bool:
        return is_orbax_entry(entry)

    def raw_meta(self, step: int) -> dict[str, Any]:
        """The meta JSON as written (:class:`StepUnreadable` if it does not parse)."""
        try:
            meta = json.loads((self.directory / str(step) / "meta" / "metadata").read_text())
        except (OSError, ValueError) as e:
            raise StepUnreadable(f"its meta item is unreadable: {e}") from None
        if not isinstance(meta, dict):
            raise StepUnreadable(f"its meta item is a {type(meta).__name__}, not a dict")
        return meta

    def records(self, step: int, meta: Mapping[str, Any]) -> dict[str, Any] | None:
        """The step's checksum records, the meta checked against them (``None``: a step from
        before checksums); a missing, unreadable or mismatched record is :class:`StepUnreadable`."""
        marker = meta.get("checksums")
        try:
            records = read_records(
                self.directory / str(step), marker if isinstance(marker, dict) else None
            )
            if records is not None and records["meta"] != json_checksum(meta):
                raise ChecksumMismatch("its meta item differs from the checksum recorded for it")
        except ChecksumMismatch as e:
            raise StepUnreadable(f"checksum mismatch: {e}") from e
        return records

    def read_meta(self, step: int) -> dict[str, Any]:
        meta = self.raw_meta(step)
        self.records(step, meta)
        return meta

    def check(self, step_dir: Path) -> tuple[dict[str, Any] | None, str | None]:
        """``(meta, error)`` of one committed step folder for ``inspect`` (files only, no
        arrays read): the meta and its checksum, the state's Orbax metadata, the data state."""
        try:
            meta = json.loads((step_dir / "meta" / "metadata").read_text())
            if not isinstance(meta, dict):
                raise ValueError(f"a {type(meta).__name__}, not a dict")
        except Exception as e:
            return None, f"meta unreadable: {type(e).__name__}: {e}"
        try:
            self.records(int(step_dir.name), meta)
        except StepUnreadable as e:
            return meta, str(e)
        try:
            tree = json.loads((step_dir / "state" / "_METADATA").read_text())
            if not isinstance(tree, dict) or not tree.get("tree_metadata"):
                raise ValueError("no tree metadata")
        except Exception as e:
            return meta, f"state unreadable: {type(e).__name__}: {e}"
        for f in sorted((step_dir / "data").glob("process_*.json")):
            try:
                json.loads(f.read_text())
            except Exception as e:
                return meta, f"data state unreadable: {type(e).__name__}: {e}"
        return meta, None

    def entries(self) -> list[tuple[int, Path, str | None]]:
        """``(step, path, why not committed)`` of every step entry, for ``inspect``."""
        out = []
        for p in self.directory.iterdir():
            if not is_orbax_entry(p):
                continue
            why = None
            if not p.name.isdigit():
                why = "incomplete (unfinalised)" if _TMP in p.name else "quarantined"
            out.append((int(p.name.split(".", 1)[0]), p, why))
        return sorted(out, key=lambda e: (e[0], e[1].name))
