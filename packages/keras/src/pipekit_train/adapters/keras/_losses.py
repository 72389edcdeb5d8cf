"""Loss names, callables and ``KerasTask`` → what ``model.compile(loss=…)`` takes.

pipekit's names keep their meaning (``pipekit_train.losses``): ``cross_entropy`` and
``binary_cross_entropy`` take *logits*, so they become Keras losses with
``from_logits=True``; integer labels pick ``SparseCategoricalCrossentropy``, one-hot
or soft labels ``CategoricalCrossentropy``. A pipekit callable is ``(pred, target)``
while Keras calls ``(y_true, y_pred)``: it is wrapped so the order is right. A
``keras.losses.Loss`` instance is passed through unchanged (Keras' order).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipekit_train.losses import is_classification, validate_loss

__all__ = ["KerasTask", "resolve_keras_loss", "classification_kind"]


@dataclass
class KerasTask:
    """What to compile the model with when a loss name is not enough.

    Args:
        loss: anything ``keras.Model.compile(loss=…)`` takes (a Keras loss object, a
            Keras loss name, or ``fn(y_true, y_pred)`` in Keras' argument order).
        classification: ``"cross_entropy"`` or ``"binary_cross_entropy"`` to report
            ``val_accuracy`` from logits at evaluation, or ``None``.
        compile_kwargs: more keyword arguments for ``compile`` (``loss_weights``, …).
    """

    loss: Any
    classification: str | None = None
    compile_kwargs: dict[str, Any] = field(default_factory=dict)


def classification_kind(loop: Any) -> str | None:
    """The classification loss name that gives ``val_accuracy``, if any."""
    if isinstance(loop.task, KerasTask):
        return loop.task.classification
    return loop.loss if is_classification(loop.loss) else None


def resolve_keras_loss(keras: Any, loss: Any, first_y: Any) -> Any:
    """A pipekit loss (name or ``(pred, target)`` callable) as a Keras loss."""
    if isinstance(loss, keras.losses.Loss):
        return loss
    validate_loss(loss, field="TrainingLoop.loss")
    if callable(loss):
        user = loss

        def pipekit_loss(y_true: Any, y_pred: Any) -> Any:
            return user(y_pred, y_true)

        pipekit_loss.__name__ = getattr(user, "__name__", "loss")
        return pipekit_loss
    losses = keras.losses
    if loss == "cross_entropy":
        y = np.asarray(first_y)
        if np.issubdtype(y.dtype, np.floating) and y.ndim >= 2 and y.shape[-1] > 1:
            return losses.CategoricalCrossentropy(from_logits=True)
        return losses.SparseCategoricalCrossentropy(from_logits=True)
    if loss == "binary_cross_entropy":
        return losses.BinaryCrossentropy(from_logits=True)
    if loss == "mse":
        return losses.MeanSquaredError()
    if loss == "mae":
        return losses.MeanAbsoluteError()
    if loss == "huber":
        return losses.Huber(delta=1.0)
    raise AssertionError(loss)  # pragma: no cover - validate_loss covers it
