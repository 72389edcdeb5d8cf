"""The ``checksums`` item of an Orbax step: written in the background, checked on restore.

Every step records a CRC-32 (:mod:`pipekit_train._checksum`) of each array of its
``state`` and ``trace`` items and of its JSON ``meta``, in ``<step>/checksums/``: one
``process_<index>.json`` per process, holding the pieces that process wrote (a fully
addressable array whole; of a sharded array each addressable shard with replica id 0,
by its global index). The item is one more entry of the step's Orbax composite, so it is
committed with the data it describes: a finalised step without it was written by a
pipekit version from before checksums (still restored, unverified), or is damaged.

Why an Orbax handler: its ``async_save`` runs in Orbax's commit thread, after the
blocking part of the save returned, so the checksums are computed off the training
thread while the arrays are written, and Orbax finalises the step (the tmp-dir rename)
only once they are on disk. The arrays it reads are the ones handed to the save (a
jax array is immutable; the driver saves its own copy of the carry), so they are the
values Orbax writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jax
import numpy as np
import orbax.checkpoint as ocp
from orbax.checkpoint import future

from pipekit_train._checksum import (
    ALGORITHM,
    ChecksumMismatch,
    shard_record,
    verify_record,
)
from pipekit_train._declared import supported
from pipekit_train.engine._orbax_files import CHECKSUM_ITEM, read_records
from pipekit_train.errors import BackendNotInstalledError
from pipekit_train.jax._packing import is_key

# ``read_records`` (reading a step's records) is core's, jax-free: ``inspect`` uses it too.

__all__ = [
    "ITEM",
    "ChecksumHandler",
    "ChecksumSave",
    "check_orbax_api",
    "marker",
    "read_records",
    "verify_item",
]

#: Orbax's commit-future API, which the background checksum write needs (not a public,
#: stable part of Orbax: core's range caps orbax-checkpoint at the newest minor tested).
ORBAX_API = ("CommitFutureAwaitingContractedSignals", "Future")


def check_orbax_api() -> None:
    """Raise ``BackendNotInstalledError`` naming the supported Orbax range if the API is gone."""
    missing = [name for name in ORBAX_API if not hasattr(future, name)]
    if missing:
        wanted = supported("pipekit-train-core", "orbax-checkpoint")
        raise BackendNotInstalledError(
            f"pipekit_train.jax writes its checkpoint checksums through Orbax's commit-future "
            f"API, which the installed orbax-checkpoint lacks "
            f"(orbax.checkpoint.future.{', '.join(missing)}). This pipekit-train-core supports "
            f"{wanted} (docs/compatibility.md): pip install '{wanted}'"
        )


check_orbax_api()

#: The name of the checksum item in a step folder.
ITEM = CHECKSUM_ITEM

#: The file of the item that Orbax's stock JSON handler reads (process 0's record).
STOCK_FILE = "metadata"

_VERSION = 1


def marker() -> dict[str, Any]:
    """What the meta records about the checksums (the restore expects them when present)."""
    return {"algorithm": ALGORITHM, "version": _VERSION, "processes": int(jax.process_count())}


def _host(value: Any) -> Any:
    """A leaf as something with shards or a numpy array (PRNG keys as their key data)."""
    if is_key(value):
        return jax.random.key_data(value)
    return value


def _bounds(index: tuple[slice, ...], shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """A shard's ``index`` (slices, possibly open) as ``(start, stop)`` per axis."""
    out = []
    for sl, dim in zip(index, shape, strict=True):
        start, stop, _ = sl.indices(dim)
        out.append((start, stop))
    return tuple(out)


def _whole(shape: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    return tuple((0, int(d)) for d in shape)


def _records(value: Any) -> list[dict[str, Any]]:
    """The records of the pieces of one array this process writes."""
    value = _host(value)
    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        return [
            shard_record(_bounds(s.index, value.shape), np.asarray(s.data))
            for s in value.addressable_shards
            if s.replica_id == 0
        ]
    host = np.asarray(value)
    return [shard_record(_whole(host.shape), host)]


@dataclass
class ChecksumSave(ocp.args.CheckpointArgs):
    """The checksum item's save arguments: the flat items to describe and the meta's checksum."""

    items: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    meta_checksum: int | None = None


class ChecksumHandler(ocp.AsyncCheckpointHandler):
    """Writes ``process_<index>.json`` from Orbax's commit thread; restore reads them all.

    Process 0 also writes ``metadata``: its record with the process count, the file Orbax's
    stock :class:`~orbax.checkpoint.JsonCheckpointHandler` reads, and the class's ``typestr``
    (set below) names that handler, so the step's ``_CHECKPOINT_METADATA`` tells a plain
    ``ocp.CheckpointManager(dir).restore(step)``, which cannot import this class, to read
    the item as JSON (decision 0195). pipekit reads the per-process files.
    """

    async def _write(self, args: ChecksumSave, directory: Any) -> None:
        _write_records(args, directory)

    async def async_save(self, directory: Any, args: ChecksumSave) -> list[future.Future] | None:
        return [
            future.CommitFutureAwaitingContractedSignals(
                self._write(args, directory), name="pipekit_checksums"
            )
        ]

    def save(self, directory: Any, args: ChecksumSave) -> None:
        _write_records(args, directory)

    def restore(self, directory: Any, args: Any = None) -> dict[str, Any]:
        return read_records(Path(str(directory)).parent, expected=None) or {}

    def metadata(self, directory: Any) -> None:
        return None


ocp.args.register_with_handler(ChecksumHandler, for_save=True, for_restore=True)(ChecksumSave)


def _stock_typestr(cls: type) -> str:
    return str(ocp.JsonCheckpointHandler.typestr())


# Only after registering: Orbax's handler-type registry is keyed by typestr, and the JSON
# handler's is taken (the registration above keeps pipekit's own name there).
setattr(ChecksumHandler, "typestr", classmethod(_stock_typestr))  # noqa: B010


def _write_records(args: ChecksumSave, directory: Any) -> None:
    """Compute this process's records and write its ``process_<index>.json`` into the item."""
    arrays = {
        f"{item}/{name}": _records(value)
        for item, flat in args.items.items()
        for name, value in flat.items()
    }
    record = {
        "algorithm": ALGORITHM,
        "version": _VERSION,
        "meta": args.meta_checksum,
        "arrays": arrays,
    }
    path = Path(str(directory))
    path.mkdir(parents=True, exist_ok=True)
    index = int(jax.process_index())
    text = json.dumps(record, sort_keys=True)
    (path / f"process_{index:05d}.json").write_text(text)
    if index == 0:  # what a stock Orbax restore reads (JsonCheckpointHandler's file)
        stock = {**record, "processes": int(jax.process_count())}
        (path / STOCK_FILE).write_text(json.dumps(stock, sort_keys=True))


def _piece_reader(value: Any) -> Any:
    """``index -> values`` of a restored array, ``None`` for pieces this process does not hold."""
    value = _host(value)
    if isinstance(value, jax.Array) and not value.is_fully_addressable:
        shards = {_bounds(s.index, value.shape): s for s in value.addressable_shards}

        def sharded(index: tuple[tuple[int, int], ...]) -> Any:
            shard = shards.get(index)
            return None if shard is None else np.asarray(shard.data)

        return sharded
    host = np.asarray(value)

    def whole(index: tuple[tuple[int, int], ...]) -> Any:
        return host[tuple(slice(a, b) for a, b in index)]

    return whole


def verify_item(item: str, restored: Mapping[str, Any], records: Mapping[str, Any]) -> None:
    """Raise :class:`ChecksumMismatch` unless every restored array of ``item`` matches its record.

    A piece held by another process (a multi-process restore onto another sharding) cannot
    be checked here and is skipped; an array without any record is a mismatch.
    """
    arrays = records["arrays"]
    for name, value in restored.items():
        key = f"{item}/{name}"
        if key not in arrays:
            raise ChecksumMismatch(f"{key}: no checksum was recorded for it")
        verify_record(key, arrays[key], _piece_reader(value))
