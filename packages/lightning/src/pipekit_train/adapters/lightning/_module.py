"""The ``LightningModule`` a loop trains: synthesised from ``model_op`` + ``loss``, or the user's.

The synthesised module's ``training_step`` is ``loss(model(batch["x"]),
batch["y"])`` and returns the loss (nothing goes through ``self.log``: metrics
reach the writers through pipekit's ``CallbackRunner``). A user task is a
``LightningModule`` (or a zero-argument factory returning one) whose own
``training_step`` is used. ``configure_optimizers`` comes from
``TrainingLoop.optimizer_config`` (core's vocabulary, :func:`attach_optimizer`) unless the
user's module defines its own, which is then kept (``_own.uses_own_optimizer``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

import lightning.pytorch as pl
from pipekit_train.errors import ConfigError
from pipekit_train.optimizers import OptimizerSpec

from ._losses import LossFn
from ._optim import build_optimizer

__all__ = ["SupervisedModule", "resolve_task", "attach_optimizer"]


class SupervisedModule(pl.LightningModule):
    """``model`` trained on ``loss(model(x), y)``."""

    def __init__(self, model: torch.nn.Module, loss: LossFn) -> None:
        super().__init__()
        self.model = model
        self.loss_fn = loss

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_step(self, batch: dict[str, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.loss_fn(self.model(batch["x"]), batch["y"])


def resolve_task(task: Any) -> pl.LightningModule:
    """The user's ``LightningModule`` from ``TrainingLoop.task`` (an instance or a factory)."""
    module = task
    if not isinstance(module, pl.LightningModule) and callable(module):
        module = module()
    if not isinstance(module, pl.LightningModule):
        raise ConfigError(
            "TrainingLoop.task must be a lightning.pytorch.LightningModule or a zero-argument "
            f"factory returning one for the lightning backend; got {type(task).__name__}",
            field="task",
        )
    return module


def attach_optimizer(
    module: pl.LightningModule, spec: OptimizerSpec
) -> Callable[[int], float] | None:
    """Make ``module.configure_optimizers`` build ``spec``; return the schedule (if any)."""
    _, schedule = build_optimizer(spec, [torch.nn.Parameter(torch.zeros(1))])

    def configure_optimizers() -> Any:
        optimizer, fn = build_optimizer(spec, module.parameters())
        if fn is None:
            return optimizer
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, fn)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "interval": "step", "frequency": 1},
        }

    module.configure_optimizers = configure_optimizers  # type: ignore[method-assign]
    return schedule
