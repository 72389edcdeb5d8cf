"""A ``DataLoader`` or a ``LightningDataModule`` as ``dataset``: its data, pipekit's order.

What is taken from the loader: its map-style ``dataset``, its ``collate_fn`` (so a user
module's ``training_step`` gets the batches in the form it was written for), its
``batch_size`` (which must equal ``TrainingLoop.batch_size``) and its ``num_workers`` (unless
``backend_options`` sets them). What pipekit keeps: the order — batch ``i`` is rows
``perm(seed, epoch)[...]`` as for arrays (``_data.StepBatches``), so a resumed run reads
the same batches. What it cannot resume is refused, naming the feature: an iterable-style
dataset (it cannot be indexed at a step), a custom ``sampler`` or ``batch_sampler`` (their
order is theirs), a ``RandomSampler`` with replacement or ``num_samples``.

A ``LightningDataModule`` is ``prepare_data()`` + ``setup("fit")``; its
``train_dataloader()`` is the training data and its ``val_dataloader()`` (if it defines
one) the validation data; its batch-transfer hooks are called as ``Trainer.fit`` calls them
(``_datamodule.StepDataModule``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

import lightning.pytorch as pl
from pipekit_train.errors import ConfigError, DataError

from ._data import StepBatches

__all__ = ["Records", "from_datamodule", "from_loader", "record_batches", "StepRecords"]


@dataclass
class Records:
    """A map-style dataset and the collate function that makes its batches."""

    dataset: Any
    collate: Callable[[list[Any]], Any]
    num_workers: int
    field: str
    datamodule: Any = None

    def __len__(self) -> int:
        return len(self.dataset)

    def batch(self, rows: Any) -> Any:
        """The loader's batch of ``rows`` (in that order)."""
        return self.collate([self.dataset[int(i)] for i in rows])


def _sampler_problem(loader: torch.utils.data.DataLoader) -> str | None:
    sampler, batch_sampler = loader.sampler, loader.batch_sampler
    data = torch.utils.data
    if type(batch_sampler) is not data.BatchSampler:
        return f"a custom batch_sampler ({type(batch_sampler).__name__})"
    if type(sampler) is data.SequentialSampler:
        return None
    if type(sampler) is data.RandomSampler:
        if sampler.replacement or sampler._num_samples is not None:
            return "a RandomSampler with replacement or num_samples"
        return None
    return f"a custom sampler ({type(sampler).__name__})"


def from_loader(loader: Any, field: str, batch_size: int) -> Records:
    """The loader's data for pipekit's order; ``DataError`` for what cannot be resumed."""
    if isinstance(loader.dataset, torch.utils.data.IterableDataset):
        raise DataError(
            f"{field} is a DataLoader over an iterable-style dataset "
            f"({type(loader.dataset).__name__}): pipekit reads batch i of a run as a function "
            "of (seed, i) so that a resumed run reads the same batches, and cannot index an "
            "iterable; give a map-style dataset (__len__ + __getitem__)",
        )
    problem = _sampler_problem(loader)
    if problem is not None:
        raise DataError(
            f"{field} is a DataLoader with {problem}: pipekit orders the batches itself "
            "(a permutation per epoch from TrainingLoop.seed), which is what makes a resumed "
            "run bit-identical, and cannot resume that order; give the DataLoader without "
            "it (shuffle=True or False are both fine: pipekit shuffles every epoch)",
        )
    if loader.batch_size != batch_size:
        raise ConfigError(
            f"TrainingLoop.batch_size={batch_size} and the batch_size={loader.batch_size} of "
            f"the DataLoader in {field} disagree; make them equal (pipekit builds the batches "
            "of that size itself)",
            field="batch_size",
        )
    if len(loader.dataset) == 0:
        raise DataError(f"{field} is empty; give at least batch_size records")
    return Records(loader.dataset, loader.collate_fn, int(loader.num_workers), field)


def _overrides(dm: pl.LightningDataModule, name: str) -> bool:
    return getattr(type(dm), name, None) is not getattr(pl.LightningDataModule, name, None)


def from_datamodule(dm: pl.LightningDataModule, batch_size: int) -> tuple[Records, Any]:
    """(training records, the validation ``DataLoader`` or None) of a ``LightningDataModule``."""
    dm.prepare_data()
    dm.setup("fit")
    train = from_loader(
        dm.train_dataloader(), "TrainingLoop.dataset (train_dataloader)", batch_size
    )
    val = dm.val_dataloader() if _overrides(dm, "val_dataloader") else None
    train.datamodule = dm
    return train, val


class StepRecords(StepBatches):
    """:class:`StepBatches`' order over a loader's records: item ``k`` is a collated batch."""

    def __init__(self, records: Records, batch_size: int, seed: int, **kwargs: Any) -> None:
        super().__init__({"x": np.arange(len(records))}, batch_size, seed, **kwargs)
        self.records = records

    def __getitem__(self, k: int) -> Any:
        rows = self.global_indices(self.start + int(k))
        return self.records.batch(rows[self.rank * self.local : (self.rank + 1) * self.local])


def record_batches(records: Records, batch_size: int) -> Iterator[tuple[Any, int]]:
    """Every record in order, as ``(batch, rows)`` of ``batch_size`` (the last may be short)."""
    n = len(records)
    for lo in range(0, n, batch_size):
        rows = range(lo, min(lo + batch_size, n))
        yield records.batch(rows), len(rows)
