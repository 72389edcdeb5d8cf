"""Core's data order served as torch batches: item ``k`` of a loader is step ``start + k``.

Why pipekit owns the data order instead of Lightning: Lightning saves a loader's
position only for a ``DataLoader`` with ``state_dict``/``load_state_dict``, and
checkpoints no RNG state, so a plain shuffled ``DataLoader`` resumed mid-epoch
replays the first part of that epoch. Here batch ``i`` is computed from
``(seed, i)`` alone by core's :class:`pipekit_train.engine.BatchSource` (the order of
every backend), and the loader is a map-style dataset whose item ``k`` is batch
``start + k``. A resumed run starts at the checkpoint's batch, whatever
``num_workers`` is (the default sequential sampler hands indices to workers in order
and the loader returns them in order).

A ``grain.MapDataset`` is not read into arrays: it stays core's ``RecordSource`` and is
read by index in its own order (``BatchSource.own_order``, decision 0198): batch ``i`` is
its elements ``i*B … (i+1)*B - 1``, Grain's own ``ds.repeat().batch(B)[i]``, so the user's
``.shuffle(seed)`` is kept and an endless one (``.repeat()``) trains. Every other form is
materialised once (``normalize_dataset``) and read in pipekit's seeded order.

What stays here is only what is torch's: tensors in (a dataset of torch tensors is
read as numpy; float64 becomes float32, torch's default) and out (``to_tensors``), the
per-rank slice and the micro-batch layout. The forms, the checks (dtype, ragged,
lengths, NaN/inf) and the order are core's (``pipekit_train.engine``).

Under DDP with ``W`` processes, rank ``r`` reads the ``r``-th contiguous slice
of ``B // W`` rows of each *global* micro-batch, so the data order and the averaged
gradient do not depend on the process count.

With gradient accumulation (``accumulate`` micro-batches per optimiser step) one
*update* reads one batch of ``accumulate * B`` rows of that order and micro-batch ``j``
is its rows ``j::accumulate`` — the Equinox and Keras backends' layout — so
``B=32, accumulate=4`` reads, per update, exactly the rows of ``B=128``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np
import torch

from pipekit_train.engine import BatchSource, RecordSource, dataset_rows, gather_rows, materialize
from pipekit_train.engine import eval_batches as core_eval_batches
from pipekit_train.engine import normalize_dataset as core_normalize_dataset
from pipekit_train.errors import DataError

__all__ = [
    "Arrays",
    "TrainData",
    "normalize_dataset",
    "training_data",
    "reads_own_order",
    "StepBatches",
    "eval_batches",
    "to_tensors",
]

Arrays = dict[str, np.ndarray]
#: The training data as read: arrays, or a ``grain.MapDataset`` read by index (its own order).
TrainData = Arrays | RecordSource


def _host(value: Any) -> Any:
    """A torch tensor as a numpy array (detached, on the CPU); anything else unchanged."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return value


def normalize_dataset(dataset: Any, field: str) -> Arrays:
    """``dataset`` in any accepted form → ``{"x": array, "y": array, ...}`` (numpy, equal length).

    Core's normalisation and checks (``pipekit_train.engine.materialize``: a
    ``DataError`` naming ``field`` for an empty, ragged, object-dtype, mismatched or
    non-finite dataset), after torch tensors are read as numpy; float64 columns become
    float32 (torch modules are float32 unless the user says otherwise).
    """
    if isinstance(dataset, Mapping):
        dataset = {k: _host(v) for k, v in dataset.items()}
    elif isinstance(dataset, tuple):
        dataset = tuple(_host(v) for v in dataset)
    return _float32(materialize(dataset, field))


def _float32(arrays: Arrays) -> Arrays:
    """float64 columns as float32 (torch modules are float32 unless the user says otherwise)."""
    return {k: a.astype(np.float32) if a.dtype == np.float64 else a for k, a in arrays.items()}


def training_data(dataset: Any, field: str) -> TrainData:
    """The training ``dataset`` as it is read: a ``grain.MapDataset`` as is, the rest as arrays.

    A ``grain.MapDataset`` stays core's ``RecordSource`` (its own order, read by index, never
    whole: an endless one trains); every other form is :func:`normalize_dataset`'s arrays.
    """
    if isinstance(dataset, (Mapping, tuple)):
        return normalize_dataset(dataset, field)
    data = core_normalize_dataset(dataset, field)
    if reads_own_order(data):
        return data
    return normalize_dataset(data, field)


def reads_own_order(data: Any) -> bool:
    """True when ``data`` is read in its own index order (a ``grain.MapDataset``)."""
    return isinstance(data, RecordSource) and data.own_order


def to_tensors(batch: Arrays) -> dict[str, torch.Tensor]:
    """numpy batch → tensors sharing memory where possible."""
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.items()}


class StepBatches(torch.utils.data.Dataset):
    """Map-style dataset: item ``k`` is global micro-batch ``start + k`` (this rank's rows).

    Micro-batch ``i`` is rows ``i % accumulate :: accumulate`` of core's update batch
    ``i // accumulate`` (a :class:`~pipekit_train.engine.BatchSource` of
    ``accumulate * batch_size`` rows); with ``accumulate=1`` it is simply global batch ``i``.
    ``data`` is arrays or a ``grain.MapDataset``'s ``RecordSource``, whose rows are gathered
    by index (core's ``gather_rows``) in its own order.
    """

    def __init__(
        self,
        data: TrainData,
        batch_size: int,
        seed: int,
        *,
        start: int = 0,
        count: int,
        rank: int = 0,
        world_size: int = 1,
        accumulate: int = 1,
    ) -> None:
        self.data = data
        self.n = dataset_rows(data)
        self.batch_size = int(batch_size)
        self.accumulate = int(accumulate)
        self.update_rows = self.batch_size * self.accumulate
        if self.n < self.update_rows:
            raise DataError(
                f"TrainingLoop.dataset has {self.n} examples, fewer than batch_size "
                f"{self.batch_size}"
                + (f" x {self.accumulate} accumulated micro-batches" if self.accumulate > 1 else "")
                + "; lower batch_size or give more data"
            )
        self.order = BatchSource(data, self.update_rows, seed)
        self.steps_per_epoch = self.order.steps_per_epoch
        self.seed = int(seed)
        self.start = int(start)
        self.count = int(count)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.local = self.batch_size // self.world_size

    def __len__(self) -> int:
        return self.count

    def global_indices(self, index: int) -> np.ndarray:
        """Row indices of global micro-batch ``index`` (all ranks together)."""
        update, micro = divmod(int(index), self.accumulate)
        rows = self.order.global_indices(update)
        return rows if self.accumulate == 1 else rows[micro :: self.accumulate]

    def __getitem__(self, k: int) -> dict[str, torch.Tensor]:
        rows = self.global_indices(self.start + int(k))
        rows = rows[self.rank * self.local : (self.rank + 1) * self.local]
        return to_tensors(_float32(gather_rows(self.data, rows)))


def eval_batches(
    data: Arrays, batch_size: int, *, field: str = "TrainingLoop.val_dataset"
) -> Iterator[dict[str, torch.Tensor]]:
    """Every row of ``data`` in order, in batches of ``batch_size`` (the last may be short)."""
    for batch in core_eval_batches(data, batch_size, field=field):
        yield to_tensors(batch)
