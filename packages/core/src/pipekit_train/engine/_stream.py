"""Streaming training data: a ``grain.IterDataset``, or a zero-argument iterator factory.

Issue 20: a user's own stream is read as it is. Both forms yield **single
examples** (``{"x": …, "y": …}`` dicts or ``(x, y)`` tuples); pipekit stacks
``batch_size`` of them into each batch, as it does for map-style data. A Grain
pipeline already batched by ``.batch(n)`` is refused by name (pass it unbatched
and set ``batch_size=n``): pipekit cannot tell a batch from an example otherwise.

Resume:

- ``grain.IterDataset``: the checkpoint's ``meta["data"]`` holds Grain's own
  iterator state (``DatasetIterator.get_state()``), captured with the step's state
  in the same commit; a resume restores it with ``set_state``. Bit-exact for any
  pipeline whose state Grain checkpoints (shuffle, repeat, map, filter …).
- an iterator factory (``dataset=lambda: iter(...)``): its iterator has no state
  pipekit can save, so a resume **replays**: it calls the factory again and skips
  the batches already consumed (a cost linear in them). That is honest only for a
  deterministic factory, so the checkpoint also records a CRC-32 of the last
  batch consumed, and the replay compares it: a factory that yields other data on
  the second call is a ``CheckpointError``, not a silent change of data.

A stream that runs out before ``max_steps`` is a ``DataError`` naming the step
(repeat it, e.g. ``ds.repeat()``, or lower ``max_steps``). A plain iterator or
generator (single use: it cannot be replayed) is a ``DataError`` saying to pass a
factory or a ``grain.IterDataset``.

Minibatch likelihoods (numpyro-svi, blackjax's sgld / sghmc) scale each batch by
the dataset size ``N``, which a stream does not know: :func:`sized_stream` is the
glue both share — the user declares ``backend_options.num_data`` (required with a
stream, checked against map-style data by :func:`data_size`), and a stream batch as
large as ``N`` (a full batch) is refused. A backend that reads the whole dataset at
once refuses a stream by name (:func:`refuse_stream`).
"""

from __future__ import annotations

import json
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import CheckpointError, ConfigError, DataError
from ._program import BatchStream

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "STREAM_READERS",
    "SizedStream",
    "Stream",
    "StreamIterator",
    "as_stream",
    "data_size",
    "prebatched_grain",
    "refuse_prebatched",
    "refuse_stream",
    "refuse_stream_options",
    "sized_stream",
]

GRAIN = "grain.IterDataset"
FACTORY = "iterator factory"

#: The backends that read a stream as ``TrainingLoop.dataset`` (for the refusals' fix).
STREAM_READERS = (
    "equinox, numpyro-svi and blackjax's sgld / sghmc (the last two with backend_options.num_data)"
)
#: The option that declares a stream's size for a minibatch likelihood.
NUM_DATA = "backend_options.num_data"


def _grain_types() -> tuple[type, type] | None:
    """Grain's dataset types, or ``None`` while Grain is not imported.

    An object can only be a Grain dataset once its user imported Grain, so a run on
    arrays never pays Grain's import (seconds in a fresh process).
    """
    grain = sys.modules.get("grain")
    iter_ds, map_ds = getattr(grain, "IterDataset", None), getattr(grain, "MapDataset", None)
    if not (isinstance(iter_ds, type) and isinstance(map_ds, type)):
        return None
    return iter_ds, map_ds


def _pipeline(ds: Any) -> list[Any]:
    """``ds`` and every Grain dataset it is built from (depth first, parents after)."""
    out, todo = [], [ds]
    while todo:
        node = todo.pop()
        out.append(node)
        todo.extend(getattr(node, "parents", ()) or ())
    return out


def prebatched_grain(ds: Any) -> int | None:
    """The batch size of a ``.batch(n)`` anywhere in a Grain pipeline, or ``None``."""
    for node in _pipeline(ds):
        if type(node).__name__ in ("BatchMapDataset", "BatchIterDataset"):
            return int(getattr(node, "_batch_size", 0)) or -1
    return None


def refuse_prebatched(ds: Any, field: str) -> None:
    """``DataError`` for a Grain dataset already batched by ``.batch(n)`` (others pass)."""
    types = _grain_types()
    if types is None or not isinstance(ds, types):
        return
    n = prebatched_grain(ds)
    if n is None:
        return
    size = f"({n})" if n > 0 else "(n)"
    raise DataError(
        f"{field} is a {type(ds).__name__} already batched by .batch{size}: pipekit batches "
        f"the examples itself, by TrainingLoop.batch_size, so each of its elements would be "
        f"read as one example. Pass the dataset before .batch{size} and set "
        f"batch_size={n if n > 0 else 'n'}."
    )


class Stream:
    """A user's stream and how it is opened again: ``kind`` is ``GRAIN`` or ``FACTORY``."""

    def __init__(self, obj: Any, kind: str, field: str) -> None:
        self.obj, self.kind, self.field = obj, kind, field

    def open(self) -> Iterator[Any]:
        """A fresh iterator from the start of the stream."""
        it = iter(self.obj) if self.kind == GRAIN else self.obj()
        if self.kind == FACTORY and not hasattr(it, "__next__"):
            raise DataError(
                f"{self.field} is a function, so it must return an iterator when called "
                f"with no arguments; it returned a {type(it).__name__}. Return iter(...) or "
                "a generator."
            )
        return it

    def describe(self) -> dict[str, Any]:
        """The resume guard's record: the kind and (Grain) the pipeline's class chain."""
        if self.kind == GRAIN:
            chain = [type(node).__name__ for node in _pipeline(self.obj)]
            return {"kind": GRAIN, "pipeline": chain}
        name = getattr(self.obj, "__qualname__", type(self.obj).__name__)
        return {"kind": FACTORY, "factory": f"{getattr(self.obj, '__module__', '?')}.{name}"}


def as_stream(dataset: Any, field: str) -> Stream | None:
    """``dataset`` as a :class:`Stream`, or ``None`` for map-style data (dict, tuple, indexable).

    Raises :class:`DataError` for a single-use iterator or generator, and for a
    Grain pipeline that is already batched.
    """
    types = _grain_types()
    if types is not None and isinstance(dataset, types[0]):
        refuse_prebatched(dataset, field)
        return Stream(dataset, GRAIN, field)
    import numpy as np

    if isinstance(dataset, (Mapping, tuple, list, np.ndarray, str, bytes)):
        return None
    if hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__"):
        return None
    if hasattr(dataset, "__next__"):
        raise DataError(
            f"{field} is a {type(dataset).__name__}, a single-use iterator: a resume could "
            "not read it again. Pass a zero-argument function that returns it "
            "(dataset=lambda: make_iterator()), or a grain.IterDataset."
        )
    if callable(dataset):
        return Stream(dataset, FACTORY, field)
    return None


def refuse_stream(dataset: Any, field: str, reader: str) -> None:
    """``DataError`` when ``dataset`` is a stream and ``reader`` needs the whole dataset at once.

    ``reader`` names what reads it (``"numpyro-mcmc"``, ``"sampler 'nuts'"``); map-style
    data passes. A single-use iterator is refused by :func:`as_stream` itself.
    """
    stream = as_stream(dataset, field)
    if stream is None:
        return
    raise DataError(
        f"{field} is a {stream.kind}, but {reader} reads the whole dataset at once, which a "
        "stream cannot give: pass map-style data (a dict of arrays, an (x, y) tuple, an "
        f"indexable, a grain.MapDataset). A stream is read by {STREAM_READERS}."
    )


def refuse_stream_options(backend_options: Mapping[str, Any]) -> None:
    """``ConfigError`` for the ``backend_options`` a stream contradicts (its order and reading
    are the user's pipeline's): ``shuffle`` and ``worker_count``."""
    for key, why in (
        ("shuffle", "a stream is read in its own order: shuffle in the pipeline (ds.shuffle)"),
        ("worker_count", "a Grain stream prefetches as its pipeline says (ds.mp_prefetch)"),
    ):
        if key in backend_options:
            raise ConfigError(
                f"backend_options.{key} contradicts TrainingLoop.dataset, a stream: {why}; "
                f"drop backend_options.{key}",
                field=f"backend_options.{key}",
            )


def _crc(batch: Mapping[str, np.ndarray]) -> int:
    import numpy as np

    crc = 0
    for key in sorted(batch):
        crc = zlib.crc32(np.ascontiguousarray(batch[key]).tobytes(), crc)
    return crc


class StreamIterator(BatchStream):
    """The driver's batch stream over a :class:`Stream` (``next_chunk``, ``get_state``, …).

    ``position`` counts batches consumed. ``prefetch`` does nothing: reading ahead
    would move Grain's iterator state past what the checkpoint has consumed.
    ``cast``, when given, maps each stacked batch (a backend's dtype policy).
    """

    def __init__(
        self,
        stream: Stream,
        batch_size: int,
        *,
        cast: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
    ) -> None:
        self.stream = stream
        self.batch_size = int(batch_size)
        self.cast = cast
        self.position = 0
        self._it: Iterator[Any] | None = None
        self._last: dict[str, np.ndarray] | None = None
        self._keys: tuple[str, ...] | None = None

    # ------------------------------------------------------------------ reading
    def _iterator(self) -> Iterator[Any]:
        if self._it is None:
            self._it = self.stream.open()
        return self._it

    def _example(self, record: Any, index: int) -> dict[str, Any]:
        if isinstance(record, Mapping):
            if "x" not in record:
                raise DataError(
                    f"{self.stream.field}: example {index} has keys {sorted(record)} but no "
                    "'x'; yield dicts with keys 'x' and 'y', or (x, y) tuples."
                )
            example = dict(record)
        elif isinstance(record, (tuple, list)) and len(record) == 2:
            example = {"x": record[0], "y": record[1]}
        else:
            raise DataError(
                f"{self.stream.field}: example {index} is a {type(record).__name__}; a stream "
                "must yield single examples, dicts with keys 'x' and 'y' or (x, y) tuples."
            )
        keys = tuple(example)
        if self._keys is None:
            self._keys = keys
        elif set(keys) != set(self._keys):
            raise DataError(
                f"{self.stream.field}: examples have inconsistent keys: {list(self._keys)} "
                f"then {list(keys)} at example {index}."
            )
        return example

    def _read(self, it: Iterator[Any], batch_index: int) -> dict[str, np.ndarray]:
        rows: list[dict[str, Any]] = []
        for i in range(self.batch_size):
            try:
                record = next(it)
            except StopIteration:
                raise DataError(
                    f"{self.stream.field} ran out after {batch_index} batches of "
                    f"{self.batch_size} (+{i} examples), at step {batch_index + 1} of the run: "
                    "repeat it (grain: ds.repeat()) or lower max_steps."
                ) from None
            rows.append(self._example(record, batch_index * self.batch_size + i))
        assert self._keys is not None
        try:
            import numpy as np

            batch = {k: np.stack([np.asarray(r[k]) for r in rows]) for k in self._keys}
        except ValueError as exc:
            raise DataError(
                f"{self.stream.field}: examples have inconsistent shapes and cannot be "
                f"batched: {exc}"
            ) from None
        return self.cast(batch) if self.cast is not None else batch

    def first_batch(self) -> dict[str, np.ndarray]:
        """The stream's first batch, from a separate iterator (for the checks before compiling)."""
        return self._read(self.stream.open(), 0)

    def next_batch(self) -> dict[str, np.ndarray]:
        batch = self._read(self._iterator(), self.position)
        self.position += 1
        self._last = batch
        return batch

    # ------------------------------------------------------------------ state
    def get_state(self) -> dict[str, Any]:
        """Batches consumed, the stream's kind, and Grain's iterator state or the replay check."""
        state: dict[str, Any] = {"position": self.position, "source": self.stream.kind}
        if self.stream.kind == GRAIN:
            grain_state = self._iterator().get_state()  # type: ignore[attr-defined]
            try:
                state["iterator"] = json.loads(json.dumps(grain_state))
            except (TypeError, ValueError) as exc:
                raise CheckpointError(
                    f"{self.stream.field}: Grain's iterator state cannot be written to the "
                    f"checkpoint's JSON metadata ({type(exc).__name__}: {exc})."
                ) from None
        else:
            state["last_batch_crc32"] = _crc(self._last) if self._last is not None else None
        return state

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Continue after the batches counted in ``state`` (restore Grain's state, or replay)."""
        if not isinstance(state, Mapping) or state.get("source") != self.stream.kind:
            saved = dict(state) if isinstance(state, Mapping) else state
            raise CheckpointError(
                f"The checkpointed data state {saved!r} does not belong to a "
                f"{self.stream.kind} ({self.stream.field} changed form "
                "since the checkpoint was written)."
            )
        position = int(state["position"])
        if self.stream.kind == GRAIN:
            it = self.stream.open()
            it.set_state(state["iterator"])  # type: ignore[attr-defined]
            self._it, self.position = it, position
            return
        it = self.stream.open()
        last = None
        for index in range(position):
            last = self._read(it, index)
        if position and (last is None or _crc(last) != state.get("last_batch_crc32")):
            raise CheckpointError(
                f"{self.stream.field} is an iterator factory, so the resume replays it and "
                f"skips the {position} batches already trained on; the batch it replays as "
                f"batch {position} differs from the one the checkpoint recorded, so the factory "
                "is not deterministic and resuming would train on other data. Make it "
                "deterministic (fixed seeds), pass a grain.IterDataset (whose state is "
                'checkpointed), or start fresh with backend_options={"resume": "never"}.'
            )
        self._it, self.position, self._last = it, position, last

    def close(self) -> None:
        """Drop the live iterator."""
        self._it = None


def _check_count(num_data: Any) -> int:
    import numpy as np

    if isinstance(num_data, bool) or not isinstance(num_data, (int, np.integer)) or num_data < 1:
        raise ConfigError(
            f"{NUM_DATA} must be a positive integer (the number of examples in the dataset), "
            f"got {num_data!r}",
            field=NUM_DATA,
        )
    return int(num_data)


def data_size(num_data: Any, rows: int, backend: str) -> int:
    """``N`` of map-style data with ``rows`` rows: ``rows``, and ``num_data`` must agree if set.

    A declared size that differs from the data would scale every minibatch's
    likelihood by the wrong ``N`` without a word, so it is a ``ConfigError`` naming both.
    """
    if num_data is None:
        return int(rows)
    if _check_count(num_data) != rows:
        raise ConfigError(
            f"{NUM_DATA} = {num_data} but TrainingLoop.dataset has {rows} rows; {backend} "
            f"scales each minibatch's likelihood by the dataset size, so the two must agree: "
            f"drop {NUM_DATA} (map-style data gives its own size) or fix it",
            field=NUM_DATA,
        )
    return int(rows)


@dataclass(frozen=True)
class SizedStream:
    """A stream with the size ``N`` its user declared, ready for a minibatch likelihood.

    Attributes:
        iterator: the driver's batch stream (its state goes into each checkpoint).
        first: the stream's first batch, from a separate iterator (for the checks
            before compiling and for initialising the model).
        num_data: ``N``, from ``backend_options.num_data``.
        record: the resume guard's entry (the stream's kind, ``batch_size``, ``N``).
    """

    iterator: StreamIterator
    first: dict[str, np.ndarray]
    num_data: int
    record: dict[str, Any]


def sized_stream(
    loop: Any,
    num_data: Any,
    *,
    backend: str,
    cast: Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]] | None = None,
) -> SizedStream | None:
    """``loop.dataset`` as a :class:`SizedStream`, or ``None`` for map-style data.

    For the minibatch backends whose likelihood is scaled by ``N`` (numpyro-svi,
    blackjax's sgld / sghmc): a stream needs ``backend_options.num_data`` (a
    ``ConfigError`` naming it otherwise), a ``batch_size`` below it (a full batch of a
    stream is refused: give the data map-style), and no ``shuffle`` / ``worker_count``
    option. ``cast`` is applied to every batch as read (the backend's dtype policy).
    """
    stream = as_stream(loop.dataset, "TrainingLoop.dataset")
    if stream is None:
        return None
    refuse_stream_options(loop.backend_options or {})
    if num_data is None:
        raise ConfigError(
            f"TrainingLoop.dataset is a {stream.kind}, which has no length, and {backend} "
            "scales each minibatch's likelihood by the dataset size N (a batch of B examples "
            f"counts N/B times): set {NUM_DATA} to the number of examples in one pass of the "
            "stream",
            field=NUM_DATA,
        )
    n = _check_count(num_data)
    if loop.batch_size >= n:
        raise ConfigError(
            f"TrainingLoop.batch_size ({loop.batch_size}) is not below {NUM_DATA} ({n}): "
            f"{backend} would read the whole dataset from the stream at every step (a full "
            "batch), where nothing is subsampled and nothing can be streamed. Give the "
            "data map-style for a full batch, or lower batch_size",
            field="batch_size",
        )
    iterator = StreamIterator(stream, loop.batch_size, cast=cast)
    record = {"data": stream.describe(), "batch_size": int(loop.batch_size), "num_data": n}
    return SizedStream(iterator, iterator.first_batch(), n, record)
