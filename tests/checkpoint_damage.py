"""Silent damage to a checkpoint for the bit-flip tests: same size, a few bytes inverted.

Shared by every backend's ``test_*_bit_flipped_newest_checkpoint_*`` test. The file
chosen is the biggest data file of the newest step (an Orbax step folder's arrays, a
Lightning ``.pt`` file); its size stays the same, so only a checksum can tell.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest

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


def assert_flipped_newest_step_falls_back(
    make_loop: Callable[[Path], Any],
    ckpt: Path,
    outputs: Callable[[Any, dict[str, Any]], dict[str, np.ndarray]],
) -> None:
    """The whole bit-flip scenario on an Orbax backend, every claim asserted.

    Runs ``make_loop(ckpt)`` to completion (the reference: its final step's saved state
    and trace, and ``outputs(op, backend_info)``), inverts 8 bytes of the newest step's
    biggest data file, runs a fresh ``make_loop(ckpt)`` again and checks: a warning names
    the step, the step was quarantined as ``<step>.corrupt``, the run resumed from the
    previous step, and the final state, trace and outputs equal the reference bit for bit.
    """
    from pipekit_train.jax.checkpoint import read_state, read_trace

    op, info = make_loop(ckpt).run()
    assert info["resumed_from_step"] is None
    steps = sorted(int(p.name) for p in ckpt.iterdir() if p.is_dir() and p.name.isdigit())
    assert len(steps) >= 2, steps
    newest, previous = steps[-1], steps[-2]
    ref_state = read_state(ckpt / str(newest))
    ref_trace = read_trace(ckpt / str(newest))
    ref_out = outputs(op, info)

    flip_bytes(biggest_data_file(ckpt / str(newest)))
    with pytest.warns(UserWarning, match=rf"step {newest}\b.*checksum mismatch"):
        op, info = make_loop(ckpt).run()

    assert (ckpt / f"{newest}.corrupt").is_dir(), sorted(p.name for p in ckpt.iterdir())
    assert info["resumed_from_step"] == previous
    assert_same_bits(read_state(ckpt / str(newest)), ref_state)
    if ref_trace is not None:
        got_trace = read_trace(ckpt / str(newest))
        assert got_trace is not None
        assert_same_bits(got_trace, ref_trace)
    assert_same_bits(outputs(op, info), ref_out)


def assert_same_bits(got: Mapping[str, Any], want: Mapping[str, Any]) -> None:
    """Same names, dtypes, shapes and bytes."""
    assert sorted(got) == sorted(want)
    for name in want:
        a, b = np.asarray(got[name]), np.asarray(want[name])
        assert a.dtype == b.dtype and a.shape == b.shape, name
        assert a.tobytes() == b.tobytes(), f"{name} differs"
