"""Pipekit loss names (``pipekit_train.losses``) → torch implementations, plus accuracy.

Same meaning as every other backend: ``cross_entropy`` takes logits and integer
labels of shape ``pred.shape[:-1]`` (a trailing label axis of size 1 is dropped) or
one-hot / soft float labels of the logits' shape, ``binary_cross_entropy`` logits and 0/1
targets, ``mse``, ``mae``, ``huber`` (delta 1); every loss is a mean over the batch. The
elementwise losses align prediction and target by core's one shape rule
(:func:`pipekit_train.losses.align_shapes`, as the JAX losses do): equal shapes, or a
trailing axis of size 1 on either side; any other pair — one torch would *broadcast*,
``(n, 2)`` against ``(n, 1)`` say, training a wrong model without a word — is a
``ConfigError`` naming both shapes, raised on the probe batch before ``fit``. A callable
``(pred, target) -> scalar tensor`` is used as given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from pipekit_train.losses import align_shapes, validate_loss

__all__ = ["resolve_loss", "accuracy"]

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


_FIELD = "TrainingLoop.loss"


def _labels(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """``target`` as class indices for ``pred``'s logits (a trailing label axis of 1 dropped).

    Torch's ``cross_entropy`` does not broadcast; a pair of other shapes fails in it and is
    reported by the probe batch as a ``DataError`` naming both shapes.
    """
    if target.ndim == pred.ndim and target.shape[-1] == 1 and pred.shape[-1] != 1:
        target = target[..., 0]
    return target.long()


def _cross_entropy(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    if target.is_floating_point() and target.shape == pred.shape:
        return F.cross_entropy(pred, target)
    return F.cross_entropy(pred, _labels(pred, target))


def _match(
    pred: torch.Tensor, target: torch.Tensor, name: str = "mse"
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(pred, target)`` of one shape by core's rule; a broadcasting pair is refused."""
    how = align_shapes(name, tuple(pred.shape), tuple(target.shape), field=_FIELD)
    if how == "expand_target":
        target = target.unsqueeze(-1)
    elif how == "squeeze_target":
        target = target.squeeze(-1)
    return pred, target.to(pred.dtype)


def _bce(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(*_match(pred, target, "binary_cross_entropy"))


def _mse(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.mse_loss(*_match(pred, target, "mse"))


def _mae(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.l1_loss(*_match(pred, target, "mae"))


def _huber(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    return F.huber_loss(*_match(pred, target, "huber"), delta=1.0)


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
        labels = target.argmax(-1) if target.shape == pred.shape else _labels(pred, target)
        return (pred.argmax(-1) == labels).float().mean()
    if name == "binary_cross_entropy":
        p, t = _match(pred, target, name)
        return ((p > 0) == (t > 0.5)).float().mean()
    return None
