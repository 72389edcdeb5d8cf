"""Pipekit loss names (``pipekit_train.losses``) → torch implementations, plus accuracy.

Same meaning as every other backend: ``cross_entropy`` takes logits and integer
labels (or one-hot / soft float labels), ``binary_cross_entropy`` logits and 0/1
targets of the same shape (a trailing axis of size 1 on either side is
tolerated), ``mse``, ``mae``, ``huber`` (delta 1); every loss is a mean over the
batch. A callable ``(pred, target) -> scalar tensor`` is used as given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from pipekit_train.losses import validate_loss

__all__ = ["resolve_loss", "accuracy"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _cross_entropy(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if target.is_floating_point() and target.shape == pred.shape:
        return F.cross_entropy(pred, target)
    return F.cross_entropy(pred, target.long())


def _match(pred: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    if pred.ndim == target.ndim + 1 and pred.shape[-1] == 1:
        pred = pred.squeeze(-1)
    elif target.ndim == pred.ndim + 1 and target.shape[-1] == 1:
        target = target.squeeze(-1)
    return pred, target.to(pred.dtype)


def _bce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    pred, target = _match(pred, target)
    return F.binary_cross_entropy_with_logits(pred, target)


def _mse(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(*_match(pred, target))


def _mae(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.l1_loss(*_match(pred, target))


def _huber(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.huber_loss(*_match(pred, target), delta=1.0)


_LOSSES: dict[str, LossFn] = {
    "cross_entropy": _cross_entropy,
    "binary_cross_entropy": _bce,
    "mse": _mse,
    "mae": _mae,
    "huber": _huber,
}


def resolve_loss(loss: Any) -> LossFn:
    """The torch function for ``loss`` (a pipekit name or a callable); ``ConfigError`` otherwise."""
    validate_loss(loss, field="TrainingLoop.loss", error_field="loss")
    if isinstance(loss, str):
        return _LOSSES[loss]
    fn: LossFn = loss
    return fn


def accuracy(name: Any, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor | None:
    """Mean accuracy for a classification loss name, ``None`` for any other loss."""
    if name == "cross_entropy":
        labels = target.argmax(-1) if target.shape == pred.shape else target.long()
        return (pred.argmax(-1) == labels).float().mean()
    if name == "binary_cross_entropy":
        p, t = _match(pred, target)
        return ((p > 0) == (t > 0.5)).float().mean()
    return None
