"""The training data as a pure function of ``(seed, batch index)``, and the loaders over it.

Why pipekit owns the data order instead of Lightning: Lightning saves a loader's
position only for a ``DataLoader`` with ``state_dict``/``load_state_dict``, and
checkpoints no RNG state, so a plain shuffled ``DataLoader`` resumed mid-epoch
replays the first part of that epoch. Here batch ``i`` is computed from
``(seed, i)`` alone — the same order as ``pipekit_train.jax.data.BatchSource``:
epoch ``e`` uses ``np.random.default_rng([seed, e]).permutation(n)``,
``steps_per_epoch = n // batch_size`` (the remainder is dropped), global batch
``j`` of epoch ``e`` is ``perm[j*B:(j+1)*B]`` — and the loader is a map-style
dataset whose item ``k`` is batch ``start + k``. A resumed run starts at the
checkpoint's batch, whatever ``num_workers`` is (the default sequential
sampler hands indices to workers in order and the loader returns them in order).

Under DDP with ``W`` processes, rank ``r`` reads the ``r``-th contiguous slice
of ``B // W`` rows of each *global* batch, so the data order and the averaged
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

from pipekit_train.errors import DataError

__all__ = ["Arrays", "normalize_dataset", "StepBatches", "eval_batches", "to_tensors"]

Arrays = dict[str, np.ndarray]

_ACCEPTED = (
    "a dict of equal-length arrays with keys 'x' and 'y', a tuple (x, y) of arrays, or an "
    "indexable object (__len__ + __getitem__) of records, each such a dict or tuple; or a "
    "torch DataLoader over a map-style dataset, or a LightningDataModule"
)


def _as_array(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().cpu().numpy()
    a = np.asarray(value)
    if a.dtype == np.float64:
        a = a.astype(np.float32)  # torch modules are float32 unless the user says otherwise
    return a


def _from_record(record: Any, field: str, index: int) -> dict[str, Any]:
    if isinstance(record, Mapping):
        return dict(record)
    if isinstance(record, (tuple, list)) and len(record) == 2:
        return {"x": record[0], "y": record[1]}
    raise DataError(
        f"{field}[{index}] is a {type(record).__name__}; each record must be a dict "
        f"{{'x': ..., 'y': ...}} or a tuple (x, y). {field} must be {_ACCEPTED}"
    )


def normalize_dataset(dataset: Any, field: str) -> Arrays:
    """``dataset`` in any accepted form → ``{"x": array, "y": array, ...}`` (numpy, equal length).

    Raises :class:`DataError` naming ``field`` for an empty, ragged or unrecognised dataset,
    and for a Grain dataset already batched by ``.batch(n)`` (each of its records would
    read as one example; core's check, which imports Grain only where it is installed).
    """
    from pipekit_train.jax._stream import refuse_prebatched

    refuse_prebatched(dataset, field)
    if isinstance(dataset, Mapping):
        arrays = {str(k): _as_array(v) for k, v in dataset.items()}
    elif isinstance(dataset, tuple) and len(dataset) == 2:
        arrays = {"x": _as_array(dataset[0]), "y": _as_array(dataset[1])}
    elif hasattr(dataset, "__len__") and hasattr(dataset, "__getitem__"):
        n = len(dataset)
        if n == 0:
            raise DataError(f"{field} is empty; give at least batch_size records")
        records = [_from_record(dataset[i], field, i) for i in range(n)]
        keys = list(records[0])
        try:
            arrays = {k: _as_array(np.stack([np.asarray(r[k]) for r in records])) for k in keys}
        except (KeyError, ValueError) as exc:
            raise DataError(
                f"{field}: its records do not all have the same keys and shapes ({exc}); "
                f"every record must hold the same fields with the same per-example shape"
            ) from exc
    else:
        raise DataError(f"{field} is a {type(dataset).__name__}; it must be {_ACCEPTED}")
    if "x" not in arrays:
        raise DataError(f"{field} has no 'x' field (it has {sorted(arrays)}); name the inputs 'x'")
    lengths = {k: (int(a.shape[0]) if a.ndim else 0) for k, a in arrays.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(
            f"{field}: its arrays have different lengths {lengths}; give one row per example "
            f"in every field"
        )
    if next(iter(lengths.values())) == 0:
        raise DataError(f"{field} is empty; give at least batch_size records")
    return arrays


def to_tensors(batch: Arrays) -> dict[str, torch.Tensor]:
    """numpy batch → tensors sharing memory where possible."""
    return {k: torch.from_numpy(np.ascontiguousarray(v)) for k, v in batch.items()}


class StepBatches(torch.utils.data.Dataset):
    """Map-style dataset: item ``k`` is global micro-batch ``start + k`` (this rank's rows).

    Micro-batch ``i`` is rows ``i % accumulate :: accumulate`` of update batch
    ``i // accumulate`` (``accumulate * batch_size`` rows); with ``accumulate=1`` it is
    simply global batch ``i``.
    """

    def __init__(
        self,
        data: Arrays,
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
        self.n = int(next(iter(data.values())).shape[0])
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
        self.steps_per_epoch = self.n // self.update_rows
        self.seed = int(seed)
        self.start = int(start)
        self.count = int(count)
        self.rank = int(rank)
        self.world_size = int(world_size)
        self.local = self.batch_size // self.world_size
        self._perm: tuple[int, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.count

    def permutation(self, epoch: int) -> np.ndarray:
        """The row order of ``epoch`` (cached for the current epoch)."""
        if self._perm is None or self._perm[0] != epoch:
            self._perm = (epoch, np.random.default_rng([self.seed, epoch]).permutation(self.n))
        return self._perm[1]

    def global_indices(self, index: int) -> np.ndarray:
        """Row indices of global micro-batch ``index`` (all ranks together)."""
        update, micro = divmod(int(index), self.accumulate)
        epoch, j = divmod(update, self.steps_per_epoch)
        rows = self.permutation(epoch)[j * self.update_rows : (j + 1) * self.update_rows]
        return rows if self.accumulate == 1 else rows[micro :: self.accumulate]

    def __getitem__(self, k: int) -> dict[str, torch.Tensor]:
        rows = self.global_indices(self.start + int(k))
        rows = rows[self.rank * self.local : (self.rank + 1) * self.local]
        return to_tensors({name: a[rows] for name, a in self.data.items()})


def eval_batches(data: Arrays, batch_size: int) -> Iterator[dict[str, torch.Tensor]]:
    """Every row of ``data`` in order, in batches of ``batch_size`` (the last may be short)."""
    n = int(next(iter(data.values())).shape[0])
    for lo in range(0, n, batch_size):
        yield to_tensors({k: a[lo : lo + batch_size] for k, a in data.items()})
