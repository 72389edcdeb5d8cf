"""Silent damage to a checkpoint for the bit-flip tests: same size, a few bytes inverted.

Shared by every backend's ``test_*_bit_flipped_newest_checkpoint_*`` test. The file
chosen is the biggest data file of the newest step (an Orbax step folder's arrays, a
Lightning ``.pt`` file); its size stays the same, so only a checksum can tell.
"""

from __future__ import annotations

from pathlib import Path

# Files that describe arrays rather than hold their values (damaging those is the
# truncated-checkpoint tests' business, and the reader already fails on them).
_NOT_DATA = {".zarray", ".zattrs", "_METADATA", "_sharding", "_CHECKPOINT_METADATA", "metadata"}


def newest_step(ckpt_dir: Path) -> int:
    """The newest committed Orbax step folder's step."""
    return max(int(p.name) for p in ckpt_dir.iterdir() if p.is_dir() and p.name.isdigit())


def biggest_data_file(step_dir: Path) -> Path:
    """The biggest array-data file of an Orbax step folder (state or trace)."""
    files = [
        p
        for item in ("state", "trace")
        for p in (step_dir / item).rglob("*")
        if p.is_file()
        and p.name not in _NOT_DATA
        and "array_metadatas" not in p.parts
        and not p.name.endswith(".txt")
    ]
    return max(files, key=lambda p: p.stat().st_size)


def flip_bytes(path: Path, count: int = 8) -> None:
    """Invert ``count`` bytes in the middle of ``path``, keeping its size."""
    data = bytearray(path.read_bytes())
    size = len(data)
    mid = max(0, size // 2 - count // 2)
    data[mid : mid + count] = bytes(b ^ 0xFF for b in data[mid : mid + count])
    path.write_bytes(bytes(data))
    assert path.stat().st_size == size
