"""The deterministic per-step data order: batch ``i`` is a pure function of ``(seed, i)``.

Why batch-level random access: a per-record pipeline delivers ~13 batches/s of sklearn
digits at batch 128, while the model steps >1000 times a second. Here record ``i`` of
the :class:`BatchSource` *is* batch ``i``: its row indices are computed
deterministically from ``(seed, epoch)`` and gathered at once with numpy fancy
indexing. The iterator's state is then just "the number of batches consumed", a small
JSON dict that the checkpoint keeps in its metadata.

Data order: epoch ``e`` uses ``np.random.default_rng([seed, e]).permutation(n)``
(identity without shuffling), ``steps_per_epoch = n // batch_size`` (the remainder is
dropped), and global batch ``j`` of epoch ``e`` is ``perm[j*B:(j+1)*B]``. With
``process_count = P`` processes, process ``p`` reads the ``p``-th contiguous slice of
``B // P`` rows of each global batch, so the data order does not depend on the process
count.

A ``grain.MapDataset`` keeps **its own order** (issue 36 item 4): the user's pipeline
(``.shuffle(seed)``, ``.repeat()``, ``.map`` …) already says which example comes when,
so global batch ``i`` is its elements ``i*B … (i+1)*B - 1``, read by index. Past the
dataset's length the index runs on, and Grain itself defines the later epochs (epoch
``e = index // len`` of a ``.shuffle(seed)`` is shuffled with seed ``seed + e``; a
source reads ``index % len``): exactly the elements ``ds.repeat()`` yields, with no
remainder dropped. ``seed`` and ``shuffle`` do not touch that order, and an explicit
``backend_options.shuffle`` that contradicts it is refused (:func:`refuse_shuffle_option`).
Resume by position works as for any source: batch ``i`` is a pure function of ``i``.
(This holds where the backend hands the dataset to ``BatchSource`` as it is — Equinox,
Keras, Lightning; a backend that materialises it into arrays first reads those in pipekit's
order.)
Every backend reads this order (the Lightning backend through its own torch
``Dataset`` over :meth:`BatchSource.global_indices`), so a resumed run reads the same
batches on each of them. numpy is imported inside the functions.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from pipekit_train.errors import CheckpointError, ConfigError, DataError

from ._data_forms import (
    Dataset,
    RecordSource,
    _numpy,
    dataset_rows,
    describe_dataset,
    gather_rows,
    is_grain_map_dataset,
    normalize_dataset,
    refuse_endless,
)
from ._program import BatchStream

if TYPE_CHECKING:
    import numpy as np

__all__ = ["BatchIterator", "BatchSource", "eval_batches", "refuse_shuffle_option"]

#: Epochs covered by ``len(BatchSource)``: the source is virtually infinite.
_VIRTUAL_EPOCHS = 10**6


class BatchSource:
    """A random-access source whose record ``i`` is (local) batch ``i``.

    It has the shape of a Grain ``RandomAccessDataSource`` (``__len__`` +
    ``__getitem__``, picklable), so ``pipekit_train.jax.data.GrainBatchIterator`` can
    hand it to Grain's worker processes unchanged; nothing here imports Grain.
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
        self.n = dataset_rows(self.data)
        if (
            isinstance(batch_size, bool)
            or not isinstance(batch_size, (int, _numpy().integer))
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
        #: A grain.MapDataset is read in its own index order (see the module docstring).
        self.own_order = isinstance(self.data, RecordSource) and self.data.own_order
        self._perm_cache: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        if self.own_order:
            return sys.maxsize // self.batch_size
        return self.steps_per_epoch * _VIRTUAL_EPOCHS

    def __repr__(self) -> str:
        if self.own_order:  # seed and shuffle do not touch the order of the user's pipeline
            return (
                f"BatchSource(n={self.n}, batch_size={self.batch_size}, order='own', "
                f"data={describe_dataset(self.data)})"
            )
        return (
            f"BatchSource(n={self.n}, batch_size={self.batch_size}, seed={self.seed}, "
            f"shuffle={self.shuffle}, data={describe_dataset(self.data)})"
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
        np = _numpy()
        if self.shuffle:
            perm = np.random.default_rng([self.seed, epoch]).permutation(self.n)
        else:
            perm = np.arange(self.n)
        self._perm_cache = (epoch, perm)
        return perm

    def global_indices(self, index: int) -> np.ndarray:
        """Row indices of global batch ``index`` (all processes together)."""
        if self.own_order:
            b = self.batch_size
            return _numpy().arange(int(index) * b, (int(index) + 1) * b)
        epoch, j = divmod(int(index), self.steps_per_epoch)
        return self.permutation(epoch)[j * self.batch_size : (j + 1) * self.batch_size]

    def local_indices(self, index: int) -> np.ndarray:
        """Row indices this process reads for batch ``index``."""
        lo = self.process_index * self.local_batch_size
        return self.global_indices(index)[lo : lo + self.local_batch_size]

    def __getitem__(self, index: int) -> dict[str, np.ndarray]:
        if not 0 <= index < len(self):
            raise IndexError(f"batch index {index} out of range")
        return gather_rows(self.data, self.local_indices(index))

    def chunk_indices(self, start: int, k: int) -> np.ndarray:
        """Row indices of local batches ``start … start+k-1``, flat, in batch order.

        Within an epoch the ``k`` global batches are one contiguous slice of the
        epoch's permutation; this process's rows are a column block of it viewed as
        ``(k, batch_size)``. A chunk that crosses epochs takes one slice per epoch.
        """
        lo = self.process_index * self.local_batch_size
        if self.own_order:
            b = self.batch_size
            rows = _numpy().arange(int(start) * b, (int(start) + int(k)) * b)
            if self.process_count > 1:
                rows = rows.reshape(int(k), b)[:, lo : lo + self.local_batch_size]
            return rows.reshape(-1)
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
        return parts[0] if len(parts) == 1 else _numpy().concatenate(parts)

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
            take = _numpy().take
            flat = {key: take(a, idx, axis=0) for key, a in self.data.items()}
        return {key: a.reshape(shape + a.shape[1:]) for key, a in flat.items()}


class BatchIterator(BatchStream):
    """Iterates a :class:`BatchSource` in order; its state is the count of batches consumed.

    The state (:meth:`get_state`) is a small JSON dict of pipekit's own —
    ``{"position": n, "source": repr(source)}`` — stored in the checkpoint's
    metadata. Batch ``i`` is a pure function of ``(seed, i)``, so the position alone
    resumes the exact sequence, on any number of processes (every process consumes
    the same global batches). This engine reads the source in this process;
    ``next_chunk(k)`` gathers all ``k`` batches in one fancy index.
    ``pipekit_train.jax.data.GrainBatchIterator`` adds Grain worker processes
    (same batches) by overriding :meth:`_reads_directly` and :meth:`_pipeline_next`.
    """

    def __init__(self, source: BatchSource) -> None:
        self.source = source
        self.position = 0  # batches consumed so far
        self._ahead: tuple[int, int, Any] | None = None  # (position, k, chunk) prefetched

    def _reads_directly(self) -> bool:
        """True when batches are gathered in this process (no worker pipeline)."""
        return True

    def _pipeline_next(self) -> dict[str, np.ndarray]:  # pragma: no cover - subclasses
        """The next batch from a worker pipeline (subclasses that have one)."""
        raise NotImplementedError

    def next_batch(self) -> dict[str, np.ndarray]:
        """The next batch: a dict of arrays with the (local) batch axis leading."""
        batch = self.source[self.position] if self._reads_directly() else self._pipeline_next()
        self.position += 1
        return batch

    def prefetch(self, k: int, place: Callable[[Any], Any] | None = None) -> None:
        """Gather the next ``k`` batches now (and ``place`` them); the position stays.

        The next ``next_chunk(k)`` returns them. The driver calls this before it
        blocks on the device, so the gather overlaps the running computation. With a
        worker pipeline (which prefetches by itself) and for ``k == 1`` it does nothing.
        """
        if not self._reads_directly() or k < 2:
            return
        chunk = self.source.get_batches(self.position, k)
        self._ahead = (self.position, k, place(chunk) if place is not None else chunk)

    def next_chunk(self, k: int) -> Any:
        """The next ``k`` batches stacked to shape ``(k, B, ...)`` (as prefetched, if so)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None and ahead[:2] == (self.position, k):
            self.position += k
            return ahead[2]
        if self._reads_directly():
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


def refuse_shuffle_option(dataset: Any, backend_options: Mapping[str, Any] | None) -> None:
    """``ConfigError`` for ``backend_options.shuffle=True`` with a ``grain.MapDataset``.

    The pipeline's own order is kept (the module docstring), so pipekit's shuffle would
    silently not happen; ``shuffle=False`` agrees with it and passes.
    """
    if not (backend_options or {}).get("shuffle") or not is_grain_map_dataset(dataset):
        return
    raise ConfigError(
        "backend_options.shuffle=True contradicts TrainingLoop.dataset, a grain.MapDataset: "
        "pipekit reads a Grain pipeline in its own index order (the order you built; later "
        "epochs as Grain defines them), so it does not reshuffle it. Shuffle in the pipeline "
        "(ds.shuffle(seed=...)) and drop backend_options.shuffle, or pass the data as a dict "
        "of arrays to have pipekit shuffle it.",
        field="backend_options.shuffle",
    )


def eval_batches(
    data: Any, batch_size: int, *, field: str = "TrainingLoop.val_dataset"
) -> Iterator[dict[str, np.ndarray]]:
    """The whole dataset in fixed order: full batches, then one final partial batch."""
    np = _numpy()
    ds = normalize_dataset(data, field)
    refuse_endless(ds, "is evaluated from start to end")
    n = dataset_rows(ds)
    for start in range(0, n, batch_size):
        yield gather_rows(ds, np.arange(start, min(start + batch_size, n)))
