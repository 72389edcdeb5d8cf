"""Loss names, callables and ``KerasTask`` → what ``model.compile(loss=…)`` takes.

pipekit's names keep their meaning (``pipekit_train.losses``): ``cross_entropy`` and
``binary_cross_entropy`` take *logits*, so they become Keras losses with
``from_logits=True``; integer labels pick ``SparseCategoricalCrossentropy``, one-hot
or soft labels ``CategoricalCrossentropy``. A pipekit callable is ``(pred, target)``
while Keras calls ``(y_true, y_pred)``: it is wrapped so the order is right. A
``keras.losses.Loss`` instance is passed through unchanged (Keras' order).

A loss *function* a user compiles with (a name such as ``"categorical_crossentropy"``,
or ``fn(y_true, y_pred)``) returns one value per sample; ``compile`` wraps it in a
``Loss`` that aligns ranks and reduces with ``"sum_over_batch_size"``
(``keras.src.losses.LossFunctionWrapper``, not exported). :func:`reduced_loss` is that
wrapper on public API, for the checks before training and for ``val_loss``.

``compile(loss="crossentropy")`` (or ``"ce"``) names no function: Keras picks binary,
sparse categorical or categorical cross-entropy when the compiled loss is built, from the
first batch's target and output shapes (``get_loss`` in keras/src/trainers/compile_utils.py).
:func:`crossentropy_by_shapes` is that rule, so pipekit checks and evaluates the loss
``fit`` will train with, before compiling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipekit_train.losses import is_classification, validate_loss

__all__ = [
    "KerasTask",
    "AUTO_CROSSENTROPY",
    "classification_kind",
    "crossentropy_by_shapes",
    "elementwise_loss_name",
    "is_auto_crossentropy",
    "reduced_loss",
    "resolve_keras_loss",
]

#: Keras' loss functions that compare prediction and target element by element (they
#: broadcast a mismatched pair silently); the name pipekit reports for each.
_ELEMENTWISE = (
    "mean_squared_error",
    "mean_absolute_error",
    "mean_absolute_percentage_error",
    "mean_squared_logarithmic_error",
    "huber",
    "log_cosh",
    "binary_crossentropy",
    "binary_focal_crossentropy",
    "hinge",
    "squared_hinge",
)
#: pipekit's own elementwise names (``pipekit_train.losses``).
_PIPEKIT_ELEMENTWISE = ("mse", "mae", "huber", "binary_cross_entropy")
#: The loss names Keras' ``compile`` resolves from the first batch's shapes (compared
#: lower-cased, as ``get_loss`` does).
AUTO_CROSSENTROPY = ("crossentropy", "ce")


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


def reduced_loss(keras: Any, fn: Any, name: str) -> Any:
    """``fn(y_true, y_pred)`` per sample as the ``keras.losses.Loss`` ``compile`` makes of it.

    As Keras' ``LossFunctionWrapper``: a rank that differs by one trailing axis of size 1
    is squeezed (or the rank-1 side expanded), then ``fn`` runs and ``Loss.__call__``
    reduces with ``"sum_over_batch_size"`` (masks and ``sample_weight`` as Keras).
    """
    ops = keras.ops

    class CompiledLossFunction(keras.losses.Loss):
        def call(self, y_true: Any, y_pred: Any) -> Any:
            t, p = len(y_true.shape), len(y_pred.shape)
            if t == p + 1 and y_true.shape[-1] == 1:
                y_true = ops.squeeze(y_true, axis=-1) if p != 1 else y_true
                y_pred = ops.expand_dims(y_pred, axis=-1) if p == 1 else y_pred
            elif p == t + 1 and y_pred.shape[-1] == 1:
                y_pred = ops.squeeze(y_pred, axis=-1) if t != 1 else y_pred
                y_true = ops.expand_dims(y_true, axis=-1) if t == 1 else y_true
            return fn(y_true, y_pred)

    loss = CompiledLossFunction(name=name)
    loss.fn = fn  # as LossFunctionWrapper: elementwise_loss_name reads it
    return loss


def is_auto_crossentropy(loss: Any) -> bool:
    """Whether ``loss`` is a name Keras resolves at the first batch (``"crossentropy"``)."""
    return isinstance(loss, str) and loss.lower() in AUTO_CROSSENTROPY


def crossentropy_by_shapes(target_shape: tuple[int, ...], pred_shape: tuple[int, ...]) -> str:
    """The ``keras.losses`` function ``"crossentropy"`` becomes for these shapes.

    Keras' rule (``is_binary_or_sparse_categorical``, Keras 3): an output whose last axis
    is 1 is binary; else targets of a lower rank than the output, or whose last axis is 1
    against a wider output, are sparse (class ids); else categorical (one-hot). Shapes
    only: the dtypes play no part, as in Keras. Both shapes have at least one axis.
    """
    t, p = tuple(target_shape), tuple(pred_shape)
    if p[-1] == 1:
        return "binary_crossentropy"
    if len(t) < len(p) or (t[-1] == 1 and p[-1] > 1):
        return "sparse_categorical_crossentropy"
    return "categorical_crossentropy"


def elementwise_loss_name(keras: Any, loss: Any) -> str | None:
    """The name of an elementwise loss (pipekit's or Keras'), else None.

    A pipekit name (``mse``, ``mae``, ``huber``, ``binary_cross_entropy``); a Keras name
    or alias (``"mse"``, ``"mean_squared_error"``, …); a Keras loss object or function
    whose function is one of Keras' elementwise ones. Cross-entropies over classes and
    user functions are not: their shapes are checked by the labels check and Keras.
    """
    if isinstance(loss, str) and loss in _PIPEKIT_ELEMENTWISE:
        return loss
    fn = loss
    if isinstance(loss, str):
        try:
            fn = keras.losses.get(loss)
        except Exception:  # not a Keras name: reported where the loss is resolved
            return None
    fn = getattr(fn, "fn", fn)  # a LossFunctionWrapper subclass (MeanSquaredError, …)
    for name in _ELEMENTWISE:
        if fn is getattr(keras.losses, name, None):
            return loss if isinstance(loss, str) else name
    return None


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
