"""The Grain batch source: batch-level random access with checkpointable state.

Why batch-level: a per-record Grain pipeline (``DataLoader`` + ``Batch``)
delivers ~13 batches/s of sklearn digits at batch 128, while the model steps
>1000 times a second. Here Grain's record ``i`` *is* batch ``i``: its row
indices are computed deterministically from ``(seed, epoch)`` and gathered at
once with numpy fancy indexing. The iterator's state is then just "the number
of batches consumed", a small JSON dict that the checkpoint keeps in its
metadata (no Grain-private state format is written).

Data order: epoch ``e`` uses ``np.random.default_rng([seed, e]).permutation(n)``
(identity without shuffling), ``steps_per_epoch = n // batch_size`` (the
remainder is dropped), and global batch ``j`` of epoch ``e`` is
``perm[j*B:(j+1)*B]``. With ``process_count = P`` processes, process ``p``
reads the ``p``-th contiguous slice of ``B // P`` rows of each global batch, so
the data order does not depend on the process count.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from pipekit_train.engine import BatchStream
from pipekit_train.errors import BackendNotInstalledError, CheckpointError, ConfigError, DataError

try:
    import numpy as np
except ImportError as _exc:  # pragma: no cover - exercised in JAX-free installs
    raise BackendNotInstalledError(
        f"pipekit_train.jax.data needs numpy ({_exc}). "
        "Install core's JAX extra: pip install 'pipekit-train-core[jax]'"
    ) from _exc

__all__ = [
    "DEFAULT_WORKER_COUNT",
    "BatchIterator",
    "BatchSource",
    "RecordSource",
    "eval_batches",
    "normalize_dataset",
]

#: Chosen by measurement on a 2-core machine (scripts/measure_data_engines.py): a
#: spawned Grain worker takes 3-37 s to deliver its first batch and then ~2.4-3 ms per
#: batch over IPC, while the in-process gather takes ~20 µs.
DEFAULT_WORKER_COUNT = 0

#: Epochs covered by ``len(BatchSource)``: the source is virtually infinite.
_VIRTUAL_EPOCHS = 10**6

_ACCEPTED = (
    "a dict of equal-length arrays with keys 'x' and 'y', a tuple (x, y) of arrays, "
    "an indexable object (__len__ + __getitem__ returning such a dict or tuple), "
    "or a grain.MapDataset"
)


def _rows(a: Any) -> int:
    shape = np.shape(a)
    return int(shape[0]) if shape else 0


def _record_keys(record: Any, field: str, index: int) -> tuple[str, ...]:
    """The canonical key tuple of one record (a dict with 'x', or an (x, y) tuple)."""
    if isinstance(record, Mapping):
        if "x" not in record:
            raise DataError(
                f"{field}: record {index} has keys {sorted(record)} but no 'x' key; "
                "records must be dicts with keys 'x' and 'y' or (x, y) tuples."
            )
        return tuple(record.keys())
    if isinstance(record, (tuple, list)) and len(record) == 2:
        return ("x", "y")
    raise DataError(
        f"{field}: record {index} is a {type(record).__name__}; each record must be a "
        "dict with keys 'x' and 'y' or an (x, y) tuple."
    )


class RecordSource:
    """A per-record dataset (indexable object or ``grain.MapDataset``).

    Records are fetched one by one and stacked, so this is slower than a dict of
    arrays; it exists so that lazily-loaded datasets need not fit in memory.
    """

    def __init__(self, obj: Any, field: str) -> None:
        self._obj = obj
        self._field = field
        self._n = len(obj)
        if self._n == 0:
            raise DataError(f"{field} is empty: it needs at least one record.")
        self.keys = _record_keys(obj[0], field, 0)
        last = _record_keys(obj[self._n - 1], field, self._n - 1)
        if set(last) != set(self.keys):
            raise DataError(
                f"{field}: records have inconsistent structure: record 0 has keys "
                f"{list(self.keys)} but record {self._n - 1} has {list(last)}."
            )

    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        kind = type(self._obj)
        return f"RecordSource({kind.__module__}.{kind.__qualname__}, n={self._n})"

    def gather(self, indices: Sequence[int] | np.ndarray) -> dict[str, np.ndarray]:
        """Fetch the records at ``indices`` and stack each field along a new axis 0."""
        columns: dict[str, list[Any]] = {k: [] for k in self.keys}
        for i in indices:
            record = self._obj[int(i)]
            keys = _record_keys(record, self._field, int(i))
            if set(keys) != set(self.keys):
                raise DataError(
                    f"{self._field}: records have inconsistent structure: record 0 has "
                    f"keys {list(self.keys)} but record {int(i)} has {list(keys)}."
                )
            if isinstance(record, Mapping):
                for k in self.keys:
                    columns[k].append(record[k])
            else:
                columns["x"].append(record[0])
                columns["y"].append(record[1])
        try:
            return {k: np.stack([np.asarray(v) for v in vs]) for k, vs in columns.items()}
        except ValueError as e:
            raise DataError(
                f"{self._field}: records have inconsistent shapes and cannot be batched: {e}"
            ) from None


Dataset = dict[str, np.ndarray] | RecordSource


def normalize_dataset(dataset: Any, field: str) -> Dataset:
    """Turn any accepted dataset form into a dict of arrays or a :class:`RecordSource`.

    ``field`` is the user-facing name used in error messages
    (e.g. ``"TrainingLoop.dataset"``).
    """
    if isinstance(dataset, (RecordSource,)):
        return dataset
    if isinstance(dataset, Mapping):
        if "x" not in dataset:
            raise DataError(
                f"{field} is a dict without an 'x' key (keys: {sorted(map(str, dataset))}); "
                "it must hold equal-length arrays under 'x' and 'y'."
            )
        arrays = {str(k): np.asarray(v) for k, v in dataset.items()}
        return _check_arrays(arrays, field)
    if isinstance(dataset, tuple):
        if len(dataset) != 2:
            raise DataError(
                f"{field} is a tuple of {len(dataset)} items; a tuple dataset must be (x, y)."
            )
        return _check_arrays({"x": np.asarray(dataset[0]), "y": np.asarray(dataset[1])}, field)
    if isinstance(dataset, (np.ndarray, str, bytes)) or not (
        hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__")
    ):
        from pipekit_train.jax._stream import as_stream

        if as_stream(dataset, field) is not None:  # a single-use iterator raises there
            raise DataError(
                f"{field} is a stream ({type(dataset).__name__}); streams (a "
                "grain.IterDataset, an iterator factory) are read as the training dataset of "
                f"the equinox backend only; here give {_ACCEPTED}."
            )
        raise DataError(f"{field} is a {type(dataset).__name__}; expected {_ACCEPTED}.")
    from pipekit_train.jax._stream import refuse_prebatched

    refuse_prebatched(dataset, field)  # a .batch(n) MapDataset would read n-row records
    # grain.MapDataset and any indexable object: per-record access.
    return RecordSource(dataset, field)


def _check_arrays(arrays: dict[str, np.ndarray], field: str) -> dict[str, np.ndarray]:
    n = _rows(arrays["x"])
    if n == 0:
        raise DataError(f"{field} is empty: 'x' has no rows.")
    for k, a in arrays.items():
        if _rows(a) != n:
            raise DataError(
                f"{field}: x has {n} rows but {k} has {_rows(a)}; all arrays must have "
                "the same length."
            )
        _check_finite(a, field, k)
    return arrays


def _check_finite(a: np.ndarray, field: str, key: str) -> None:
    """Raise :class:`DataError` naming ``field``, ``key`` and the first row holding NaN/inf.

    One vectorised ``isfinite`` pass over floating (and complex) arrays; integer,
    boolean and object arrays cannot hold NaN and are skipped. Locating the row
    costs a second pass, only when there is one to report.
    """
    if a.dtype.kind not in "fc" or np.isfinite(a).all():
        return
    bad_rows = ~np.isfinite(a).reshape(a.shape[0], -1).all(axis=1) if a.ndim else np.ones(1, bool)
    row = int(np.argmax(bad_rows))
    count = int(bad_rows.sum())
    value = a[row] if a.ndim else a
    flat = np.asarray(value).reshape(-1)
    first = flat[~np.isfinite(flat)][0]
    raise DataError(
        f"{field}[{key!r}] has non-finite values (NaN or inf): first at row {row} "
        f"(value {first}), {count} bad row(s) in all. Drop or impute those rows before "
        "training; a NaN in the data makes every parameter NaN after one step."
    )


def _describe(data: Dataset) -> str:
    if isinstance(data, RecordSource):
        return repr(data)
    parts = [f"{k}:{a.dtype}{list(a.shape[1:])}" for k, a in data.items()]
    return "{" + ", ".join(parts) + "}"


def _gather(data: Dataset, idx: np.ndarray) -> dict[str, np.ndarray]:
    if isinstance(data, RecordSource):
        return data.gather(idx)
    return {k: a[idx] for k, a in data.items()}


class BatchSource:
    """A Grain ``RandomAccessDataSource`` whose record ``i`` is (local) batch ``i``.

    Infinite over epochs (``len`` is a large virtual length that does not depend
    on ``max_steps``), picklable for Grain worker processes, and with a stable
    ``repr`` (a restored iterator state is checked against it). The repr leaves out the
    process index and count: the iterator state (the next batch index) means the
    same thing on every process.
    """

    def __init__(
        self,
        data: Any,
        batch_size: int,
        seed: int,
        shuffle: bool = True,
        process_index: int = 0,
        process_count: int = 1,
        *,
        field: str = "TrainingLoop.dataset",
    ) -> None:
        self.data: Dataset = normalize_dataset(data, field)
        self.n = len(self.data) if isinstance(self.data, RecordSource) else _rows(self.data["x"])
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, (int, np.integer))
            or batch_size < 1
        ):
            raise ConfigError(
                f"TrainingLoop.batch_size must be a positive integer, got {batch_size!r}.",
                field="batch_size",
            )
        if batch_size > self.n:
            raise DataError(
                f"TrainingLoop.batch_size ({batch_size}) is larger than {field}, which has "
                f"{self.n} rows; use batch_size <= {self.n}."
            )
        if process_count < 1 or not 0 <= process_index < process_count:
            raise ConfigError(
                f"process_index {process_index} is not in range for process_count {process_count}."
            )
        if batch_size % process_count:
            raise ConfigError(
                f"TrainingLoop.batch_size ({batch_size}) must be divisible by the number of "
                f"processes ({process_count}).",
                field="batch_size",
            )
        self.batch_size = int(batch_size)
        self.seed = int(seed)
        self.shuffle = bool(shuffle)
        self.process_index = int(process_index)
        self.process_count = int(process_count)
        self.local_batch_size = self.batch_size // self.process_count
        self.steps_per_epoch = self.n // self.batch_size
        self._perm_cache: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.steps_per_epoch * _VIRTUAL_EPOCHS

    def __repr__(self) -> str:
        return (
            f"BatchSource(n={self.n}, batch_size={self.batch_size}, seed={self.seed}, "
            f"shuffle={self.shuffle}, data={_describe(self.data)})"
        )

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_perm_cache"] = None
        return state

    def permutation(self, epoch: int) -> np.ndarray:
        """Row order of ``epoch`` (cached for the current epoch; thread-safe swap)."""
        cached = self._perm_cache
        if cached is not None and cached[0] == epoch:
            return cached[1]
        if self.shuffle:
            perm = np.random.default_rng([self.seed, epoch]).permutation(self.n)
        else:
            perm = np.arange(self.n)
        self._perm_cache = (epoch, perm)
        return perm

    def global_indices(self, index: int) -> np.ndarray:
        """Row indices of global batch ``index`` (all processes together)."""
        epoch, j = divmod(int(index), self.steps_per_epoch)
        return self.permutation(epoch)[j * self.batch_size : (j + 1) * self.batch_size]

    def local_indices(self, index: int) -> np.ndarray:
        """Row indices this process reads for batch ``index``."""
        lo = self.process_index * self.local_batch_size
        return self.global_indices(index)[lo : lo + self.local_batch_size]

    def __getitem__(self, index: int) -> dict[str, np.ndarray]:
        if not 0 <= index < len(self):
            raise IndexError(f"batch index {index} out of range")
        return _gather(self.data, self.local_indices(index))

    def chunk_indices(self, start: int, k: int) -> np.ndarray:
        """Row indices of local batches ``start … start+k-1``, flat, in batch order.

        Within an epoch the ``k`` global batches are one contiguous slice of the
        epoch's permutation; this process's rows are a column block of it viewed as
        ``(k, batch_size)``. A chunk that crosses epochs takes one slice per epoch.
        """
        lo = self.process_index * self.local_batch_size
        parts: list[np.ndarray] = []
        index, end = int(start), int(start) + int(k)
        while index < end:
            epoch, j = divmod(index, self.steps_per_epoch)
            m = min(end - index, self.steps_per_epoch - j)
            rows = self.permutation(epoch)[j * self.batch_size : (j + m) * self.batch_size]
            if self.process_count > 1:
                rows = rows.reshape(m, self.batch_size)[:, lo : lo + self.local_batch_size]
            parts.append(rows.reshape(-1))
            index += m
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def get_batches(self, start: int, k: int) -> dict[str, np.ndarray]:
        """Batches ``start … start+k-1`` stacked to ``(k, local_batch_size, ...)``.

        One permutation slice and one ``np.take`` per array (instead of ``k``
        index concatenations); the batches are the same as ``self[i]`` for each ``i``.
        """
        idx = self.chunk_indices(start, k)
        shape = (k, self.local_batch_size)
        if isinstance(self.data, RecordSource):
            flat = self.data.gather(idx)
        else:
            flat = {key: np.take(a, idx, axis=0) for key, a in self.data.items()}
        return {key: a.reshape(shape + a.shape[1:]) for key, a in flat.items()}


def _mark_flags_parsed() -> None:
    """Grain reads absl flags; outside ``absl.app.run`` they are unparsed."""
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


class BatchIterator(BatchStream):
    """Iterates a :class:`BatchSource` in order; its state is the count of batches consumed.

    The state (:meth:`get_state`) is a small JSON dict of pipekit's own —
    ``{"position": n, "source": repr(source)}`` — stored in the checkpoint's
    metadata, never a copy of a Grain-private format. Batch ``i`` is a pure
    function of ``(seed, i)``, so the position alone resumes the exact sequence,
    on any number of processes (every process consumes the same global batches)
    and with any ``worker_count``.

    Two engines give the same batches:

    - ``worker_count == 0`` (default): reads the source directly in this process;
      ``next_chunk(k)`` gathers all ``k`` batches in one fancy index.
    - ``worker_count > 0``: Grain's public dataset API,
      ``grain.MapDataset.source(source)[position:]`` prefetched by ``worker_count``
      worker processes (``IterDataset.mp_prefetch``); a restore rebuilds the
      pipeline from the new position.
    """

    def __init__(
        self,
        source: BatchSource,
        *,
        worker_count: int = DEFAULT_WORKER_COUNT,
        worker_buffer_size: int = 1,
    ) -> None:
        if isinstance(worker_count, bool) or not isinstance(worker_count, int) or worker_count < 0:
            raise ConfigError(
                f"backend_options.worker_count must be an integer >= 0, got {worker_count!r}.",
                field="backend_options.worker_count",
            )
        self.source = source
        self.worker_count = worker_count
        self.worker_buffer_size = worker_buffer_size
        self.position = 0  # batches consumed so far
        self._iterator: Any = None  # Grain's pipeline, started lazily at the current position
        self._ahead: tuple[int, int, Any] | None = None  # (position, k, chunk) prefetched
        if worker_count > 0:
            _mark_flags_parsed()

    def _grain_iterator(self, start: int) -> Any:
        """Grain's multiprocess pipeline over the batch source, from batch ``start``."""
        import grain

        dataset = grain.MapDataset.source(self.source)[start:]
        iter_ds = dataset.to_iter_dataset(grain.ReadOptions(num_threads=0, prefetch_buffer_size=0))
        options = grain.MultiprocessingOptions(
            num_workers=self.worker_count, per_worker_buffer_size=self.worker_buffer_size
        )
        return iter(iter_ds.mp_prefetch(options))

    def next_batch(self) -> dict[str, np.ndarray]:
        """The next batch: a dict of arrays with the (local) batch axis leading."""
        if self.worker_count == 0:
            batch = self.source[self.position]
        else:
            if self._iterator is None:
                self._iterator = self._grain_iterator(self.position)
            batch = next(self._iterator)
        self.position += 1
        return batch

    def prefetch(self, k: int, place: Callable[[Any], Any] | None = None) -> None:
        """Gather the next ``k`` batches now (and ``place`` them); the position stays.

        The next ``next_chunk(k)`` returns them. The driver calls this before it
        blocks on the device, so the gather overlaps the running computation. With
        Grain workers (which prefetch by themselves) and for ``k == 1`` it does nothing.
        """
        if self.worker_count or k < 2:
            return
        chunk = self.source.get_batches(self.position, k)
        self._ahead = (self.position, k, place(chunk) if place is not None else chunk)

    def next_chunk(self, k: int) -> Any:
        """The next ``k`` batches stacked to shape ``(k, B, ...)`` (as prefetched, if so)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[:2] == (self.position, k):
            self.position += k
            return ahead[2]
        if self.worker_count == 0:
            chunk = self.source.get_batches(self.position, k)
            self.position += k
            return chunk
        return super().next_chunk(k)

    def get_state(self) -> dict[str, Any]:
        """The position (batches consumed) and the source it refers to, as JSON-able data."""
        return {"position": self.position, "source": repr(self.source)}

    def set_state(self, state: Mapping[str, Any]) -> None:
        """Continue after the batches counted in ``state`` (from any engine / worker count)."""
        if not isinstance(state, Mapping) or "position" not in state:
            raise CheckpointError(
                f"The checkpointed data iterator state {state!r} is not a pipekit batch position."
            )
        if state.get("source") != repr(self.source):
            raise CheckpointError(
                "The checkpointed data iterator belongs to a different data source:\n"
                f"  checkpoint: {state.get('source')}\n  this run:   {self.source!r}\n"
                "The dataset, batch_size or seed changed since the checkpoint was written."
            )
        self.position = int(state["position"])
        self._ahead = None
        self.close()  # a running pipeline restarts lazily from the new position

    def close(self) -> None:
        """Stop Grain's worker processes, if any."""
        iterator, self._iterator = self._iterator, None
        closer = getattr(iterator, "close", None)
        if callable(closer):
            closer()


def eval_batches(
    data: Any, batch_size: int, *, field: str = "TrainingLoop.val_dataset"
) -> Iterator[dict[str, np.ndarray]]:
    """The whole dataset in fixed order: full batches, then one final partial batch."""
    ds = normalize_dataset(data, field)
    n = len(ds) if isinstance(ds, RecordSource) else _rows(ds["x"])
    for start in range(0, n, batch_size):
        yield _gather(ds, np.arange(start, min(start + batch_size, n)))
