"""The ``LightningDataModule`` over :class:`~._data.StepBatches` (the resumable data order).

With the user's own ``LightningDataModule`` as ``dataset`` its batch-transfer hooks
(``on_before_batch_transfer``, ``transfer_batch_to_device``, ``on_after_batch_transfer``)
are this module's, so ``Trainer.fit`` calls them exactly as it calls a datamodule's own:
Lightning's ``_DataHookSelector`` takes each hook the user's datamodule overrides (over
the ``LightningModule``'s, with Lightning's warning when both do) and the module's
otherwise; the user's datamodule gets the ``trainer`` (``self.trainer.training`` …).
"""

from __future__ import annotations

import torch

import lightning.pytorch as pl
from lightning.pytorch.utilities.model_helpers import is_overridden
from pipekit_train.errors import ConfigError

from ._data import StepBatches, TrainData
from ._loaders import Records, StepRecords

__all__ = ["StepDataModule", "TRANSFER_HOOKS", "own_transfer_hooks"]

#: The batch-transfer hooks a ``LightningDataModule`` shares with a ``LightningModule``.
TRANSFER_HOOKS = ("on_before_batch_transfer", "transfer_batch_to_device", "on_after_batch_transfer")


def own_transfer_hooks(dm: pl.LightningDataModule) -> list[str]:
    """The batch-transfer hooks ``dm`` defines itself (Lightning's own test)."""
    return [name for name in TRANSFER_HOOKS if is_overridden(name, dm)]


class StepDataModule(pl.LightningDataModule):
    """Serves global batches ``start … start + count - 1``, this rank's rows of each.

    The loader has ``batch_size=None`` (each item already is a batch) and the
    default sequential sampler, so with any ``num_workers`` the batches arrive
    in index order; Lightning's distributed sampler is switched off
    (``use_distributed_sampler=False``) because the split across ranks is done
    inside each global batch.
    """

    def __init__(
        self,
        data: TrainData,
        batch_size: int,
        seed: int,
        *,
        start: int,
        count: int,
        num_workers: int,
        accumulate: int = 1,
        records: Records | None = None,
        user: pl.LightningDataModule | None = None,
    ) -> None:
        super().__init__()
        self.data = data
        self.batch_size = batch_size
        self.seed = seed
        self.start = start
        self.count = count
        self.num_workers = num_workers
        self.accumulate = accumulate
        self.records = records
        self.user = user
        for name in own_transfer_hooks(user) if user is not None else []:
            setattr(self, name, getattr(user, name))

    def setup(self, stage: str) -> None:
        if self.user is not None:  # its hooks may read self.trainer, as under Trainer.fit
            self.user.trainer = self.trainer

    def train_dataloader(self) -> torch.utils.data.DataLoader:
        world = self.trainer.world_size if self.trainer is not None else 1
        rank = self.trainer.global_rank if self.trainer is not None else 0
        if self.batch_size % world:
            raise ConfigError(
                f"TrainingLoop.batch_size ({self.batch_size}) must be divisible by the number "
                f"of processes ({world}): it is the global batch, split evenly across ranks",
                field="batch_size",
            )
        where = {
            "start": self.start,
            "count": self.count,
            "rank": rank,
            "world_size": world,
            "accumulate": self.accumulate,
        }
        dataset: StepBatches
        if self.records is not None:  # a user DataLoader's records, collated its way
            dataset = StepRecords(self.records, self.batch_size, self.seed, **where)
        else:
            dataset = StepBatches(self.data, self.batch_size, self.seed, **where)
        return torch.utils.data.DataLoader(
            dataset,
            batch_size=None,
            shuffle=False,
            num_workers=self.num_workers,
            persistent_workers=self.num_workers > 0,
        )
