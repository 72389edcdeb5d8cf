"""Bring your own ``LightningModule``: what it says is used, contradictions are ``ConfigError``.

A user module (``task=``, or a ``LightningModule`` given as ``model_op``) keeps its
``training_step``, ``configure_optimizers`` and ``validation_step``. The loop fields that
would contradict them — ``loss=`` beside an own ``training_step``, an ``optimizer_config``
other than the default beside an own ``configure_optimizers`` — are refused naming both
sides, before ``Trainer.fit`` (docs/decisions/0074-users-object-wins-or-config-error.md).

:class:`LogRecorder` lets the module's ``self.log`` / ``self.log_dict`` values reach
pipekit's writers: it wraps the instance's ``log`` for the run (forwarding every call to
Lightning's own, so the progress bar and ``callback_metrics`` see them too) and keeps
each step's values, as tensors (no host transfer until the next host event).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

import lightning.pytorch as pl
from pipekit_train.errors import ConfigError
from pipekit_train.loop import DEFAULT_OPTIMIZER

__all__ = ["LogRecorder", "check_own_loss", "overrides", "uses_own_optimizer"]


def overrides(module: Any, name: str) -> bool:
    """Whether ``module``'s class defines its own ``name`` (not ``LightningModule``'s)."""
    if not isinstance(module, pl.LightningModule):
        return False
    return getattr(type(module), name, None) is not getattr(pl.LightningModule, name, None)


def check_own_loss(loop: Any, module: pl.LightningModule, field: str) -> None:
    """A module with its own ``training_step`` computes the loss: ``loss=`` contradicts it."""
    if loop.loss is not None:
        raise ConfigError(
            f"TrainingLoop.{field} is a LightningModule ({type(module).__name__}) with its own "
            f"training_step, which computes the loss, and TrainingLoop.loss={loop.loss!r} says "
            "another; drop loss= (the module's training_step is used), or give a plain "
            "torch.nn.Module as model_op to train it on loss=",
            field="loss",
        )


def uses_own_optimizer(loop: Any, module: torch.nn.Module, field: str) -> bool:
    """True when the module's ``configure_optimizers`` is used (the loop's is not attached).

    A module that defines ``configure_optimizers`` keeps it while ``optimizer_config`` is
    the default; an explicit ``optimizer_config`` beside it is a ``ConfigError``.
    """
    if not overrides(module, "configure_optimizers"):
        return False
    if dict(loop.optimizer_config) != DEFAULT_OPTIMIZER:
        raise ConfigError(
            f"TrainingLoop.optimizer_config={loop.optimizer_config!r} and "
            f"{type(module).__name__}.configure_optimizers (TrainingLoop.{field}) both say "
            "which optimiser trains the module; drop optimizer_config to use the module's "
            "own (its optimiser and LR schedulers are kept), or delete configure_optimizers "
            "to use optimizer_config (gradient clipping: backend_options="
            '{"gradient_clip_val": ...})',
            field="optimizer_config",
        )
    return True


def _detached(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach()
    return value


class LogRecorder:
    """Keeps every ``self.log`` value of the current step; redirects them during evaluation."""

    def __init__(self, module: pl.LightningModule) -> None:
        self.module = module
        self.current: dict[str, list[Any]] = {}
        #: during pipekit's evaluation pass: ``sink(name, value, batch_size)``, and
        #: Lightning's own ``log`` is not called (it is not inside a Lightning loop then).
        self.sink: Callable[[str, Any, int | None], None] | None = None
        self._installed = False

    def install(self) -> None:
        """Shadow the instance's ``log`` (``log_dict`` calls it too) for the run."""
        original = type(self.module).log.__get__(self.module)

        def log(name: str, value: Any, *args: Any, **kwargs: Any) -> None:
            if self.sink is not None:
                self.sink(name, value, kwargs.get("batch_size"))
                return None
            self.current.setdefault(name, []).append(_detached(value))
            return original(name, value, *args, **kwargs)

        self.module.__dict__["log"] = log
        self._installed = True

    def remove(self) -> None:
        """Give the module its own ``log`` back."""
        if self._installed:
            self.module.__dict__.pop("log", None)
            self._installed = False

    def take(self) -> dict[str, Any]:
        """This update's values (the mean over its micro-batches), and start the next."""
        out: dict[str, Any] = {}
        for name, values in self.current.items():
            tensors = [torch.as_tensor(v).detach().float().mean() for v in values]
            out[name] = tensors[0] if len(tensors) == 1 else torch.stack(tensors).mean()
        self.current = {}
        return out
