"""Lightning's own ``Trainer.fit``, run directly on pipekit's data order, for comparisons.

Pipekit owns the order (batch ``i`` is core's ``BatchSource`` rows of ``(seed, i)``); the
reference run reads the same rows through a plain ``DataLoader`` whose sampler lists them,
so a pipekit run and ``Trainer.fit`` on the same data and seed see the same batches.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import lightning.pytorch as pl
import numpy as np
import torch

from pipekit_train.engine import BatchSource

QUIET = {
    "accelerator": "cpu",
    "logger": False,
    "enable_checkpointing": False,
    "enable_progress_bar": False,
    "enable_model_summary": False,
    "num_sanity_val_steps": 0,
    "limit_val_batches": 0,
}


class PipekitOrder(torch.utils.data.Sampler[int]):
    """The rows of pipekit's batches ``0 … steps - 1`` of ``n`` records, in order."""

    def __init__(self, n: int, batch_size: int, seed: int, steps: int) -> None:
        order = BatchSource({"x": np.arange(n)}, batch_size, seed)
        self.rows = [int(i) for s in range(steps) for i in order.global_indices(s)]

    def __iter__(self) -> Iterator[int]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)


def ordered_loader(
    dataset: Any, batch_size: int, seed: int, steps: int, **kwargs: Any
) -> torch.utils.data.DataLoader:
    """A ``DataLoader`` over ``dataset`` serving pipekit's first ``steps`` batches."""
    sampler = PipekitOrder(len(dataset), batch_size, seed, steps)
    return torch.utils.data.DataLoader(dataset, batch_size=batch_size, sampler=sampler, **kwargs)


def direct_fit(
    module: pl.LightningModule, steps: int, trainer: dict[str, Any] | None = None, **fit: Any
) -> pl.Trainer:
    """``Trainer(max_steps=steps, **QUIET, **trainer).fit(module, **fit)``; the trainer."""
    run = pl.Trainer(max_steps=steps, **{**QUIET, **(trainer or {})})
    run.fit(module, **fit)
    return run


def assert_same_parameters(a: torch.nn.Module, b: torch.nn.Module) -> None:
    """Every parameter of ``a`` and ``b`` equal (to float32 rounding)."""
    pa, pb = dict(a.named_parameters()), dict(b.named_parameters())
    assert pa.keys() == pb.keys()
    for name in pa:
        torch.testing.assert_close(pa[name], pb[name], rtol=1e-5, atol=1e-6, msg=name)
