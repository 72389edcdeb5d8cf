"""What the kit reads and does to a run folder: snapshots, silent damage, bit comparison.

Store-agnostic: the step's files come from :func:`pipekit_train.engine.find_checkpoint_files`
(an Orbax step folder or a Lightning ``step-*.pt`` file, whichever the folder holds), so the
same damage and the same comparison apply to every backend's checkpoints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "snapshot",
    "committed_steps",
    "newest_data_file",
    "biggest_data_file",
    "flip_bytes",
    "bit_differences",
]

# Files that describe arrays rather than hold their values: damaging those is the
# truncated-checkpoint tests' business (the reader already fails on them).
_NOT_DATA = {".zarray", ".zattrs", "_METADATA", "_sharding", "_CHECKPOINT_METADATA", "metadata"}


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    """Every entry under ``folder``: relative path → (bytes, mtime in ns), folders as ``b""``.

    Equal before and after a refused run means the run touched nothing there.
    """
    if not folder.exists():
        return {}
    out: dict[str, tuple[bytes, int]] = {}
    for path in sorted(folder.rglob("*")):
        rel = str(path.relative_to(folder))
        out[rel] = (path.read_bytes() if path.is_file() else b"", path.stat().st_mtime_ns)
    return out


def committed_steps(run_dir: Path) -> list[int]:
    """The committed checkpoint steps of ``run_dir``, oldest first (``[]`` when none)."""
    from pipekit_train.engine import find_checkpoint_files

    files = find_checkpoint_files(run_dir)
    return [] if files is None else files.steps()


def newest_data_file(run_dir: Path) -> tuple[int, Path, Path]:
    """``(step, step path, data file)`` of the newest committed step: the step's biggest file
    that holds array values (a folder's array chunks, or the step file itself)."""
    from pipekit_train.engine import find_checkpoint_files

    files = find_checkpoint_files(run_dir)
    if files is None or not files.steps():
        raise AssertionError(f"no committed checkpoint in {run_dir}")
    step = files.steps()[-1]
    main = files.step_paths(step)[0]
    return step, main, biggest_data_file(main)


def biggest_data_file(step_path: Path) -> Path:
    """The biggest file of a step that holds array values: the step file itself (a Lightning
    ``step-*.pt``), or the biggest array chunk of an Orbax step folder (state or trace)."""
    if step_path.is_file():
        return step_path
    candidates = [
        p
        for p in step_path.rglob("*")
        if p.is_file()
        and p.name not in _NOT_DATA
        and "array_metadatas" not in p.parts
        and not p.name.endswith((".txt", ".json"))
    ]
    if not candidates:
        raise AssertionError(f"no array data file in {step_path}")
    return max(candidates, key=lambda p: p.stat().st_size)


def flip_bytes(path: Path, count: int = 8) -> None:
    """Invert ``count`` bytes in the middle of ``path``, keeping its size and mtime: only a
    checksum can tell."""
    stat = path.stat()
    data = bytearray(path.read_bytes())
    mid = max(0, len(data) // 2 - count // 2)
    data[mid : mid + count] = bytes(b ^ 0xFF for b in data[mid : mid + count])
    path.write_bytes(bytes(data))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def bit_differences(got: Mapping[str, Any], want: Mapping[str, Any]) -> list[str]:
    """What differs between two ``{name: array}`` maps: names, dtypes, shapes or bytes."""
    import numpy as np

    if sorted(got) != sorted(want):
        return [f"names differ: {sorted(set(got) ^ set(want))}"]
    out = []
    for name in sorted(want):
        a, b = np.asarray(got[name]), np.asarray(want[name])
        if a.dtype != b.dtype or a.shape != b.shape:
            out.append(f"{name}: {a.dtype}{list(a.shape)} != {b.dtype}{list(b.shape)}")
        elif a.tobytes() != b.tobytes():
            out.append(f"{name}: values differ")
    return out
