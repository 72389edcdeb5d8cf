"""The carrier-agnostic loss names (no array library imported here).

``TrainingLoop.loss`` is either one of :data:`LOSS_NAMES` or a callable
``(pred, target) -> scalar`` written for the backend's own array type. Core only
knows the *names*: each backend resolves a name to its own implementation —
``pipekit_train.jax.losses`` for the JAX backends (Equinox, NumPyro SVI), torch
functions for Lightning, ``keras.losses`` for Keras — with the same meaning:

``"cross_entropy"``
    Softmax cross-entropy from logits ``(batch, classes)``; targets are integer
    class labels ``(batch,)`` or one-hot / soft float labels ``(batch, classes)``.
``"binary_cross_entropy"``
    Sigmoid cross-entropy from logits; targets are 0/1 (or probabilities) of the
    same shape as the logits (a trailing axis of size 1 on either side is
    tolerated).
``"mse"``
    Mean squared error.
``"mae"``
    Mean absolute error.
``"huber"``
    Huber loss with ``delta = 1``: quadratic for ``|error| <= 1``, linear beyond.

Every loss is averaged over all elements of the batch to a scalar.
:data:`CLASSIFICATION_LOSSES` are the names for which backends also report
accuracy during evaluation.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.errors import ConfigError, closest

__all__ = [
    "LOSS_NAMES",
    "CLASSIFICATION_LOSSES",
    "is_classification",
    "validate_loss",
    "unknown_loss_error",
    "align_shapes",
]

#: The loss names every backend understands.
LOSS_NAMES: tuple[str, ...] = ("cross_entropy", "binary_cross_entropy", "mse", "mae", "huber")

#: Names whose predictions are class logits (backends add ``accuracy`` to eval).
CLASSIFICATION_LOSSES: frozenset[str] = frozenset({"cross_entropy", "binary_cross_entropy"})

# Names users bring from other libraries → ours; only used to suggest a fix.
_FOREIGN_NAMES: dict[str, str] = {
    "mean_squared_error": "mse",
    "mean_absolute_error": "mae",
    "l2": "mse",
    "l1": "mae",
    "huber_loss": "huber",
    "crossentropy": "cross_entropy",
    "categorical_crossentropy": "cross_entropy",
    "sparse_categorical_crossentropy": "cross_entropy",
    "softmax_cross_entropy": "cross_entropy",
    "nll": "cross_entropy",
    "binary_crossentropy": "binary_cross_entropy",
    "bce": "binary_cross_entropy",
    "sigmoid_binary_cross_entropy": "binary_cross_entropy",
}


def is_classification(name: Any) -> bool:
    """True if ``name`` is a classification loss name (a callable is never one)."""
    return isinstance(name, str) and name in CLASSIFICATION_LOSSES


def unknown_loss_error(
    name: str, field: str = "TrainingLoop.loss", *, error_field: str | None = None
) -> ConfigError:
    """The :class:`ConfigError` for a loss name that is not in :data:`LOSS_NAMES`.

    The hint maps names from other libraries (``"bce"``, ``"mean_squared_error"``,
    any case) to ours first, then falls back to the closest name, case-insensitively.
    ``error_field`` is the ``ConfigError.field`` to set (default: ``field``).
    """
    foreign = _FOREIGN_NAMES.get(name.lower()) if isinstance(name, str) else None
    hint = f" (did you mean {foreign!r}?)" if foreign else closest(name, LOSS_NAMES)
    return ConfigError(
        f"{field}: unknown loss {name!r}{hint}; valid names: {', '.join(LOSS_NAMES)}, "
        f"or a callable (pred, target) -> scalar",
        field=error_field or field,
    )


def validate_loss(
    loss: Any, *, field: str = "TrainingLoop.loss", error_field: str | None = None
) -> None:
    """Raise :class:`ConfigError` unless ``loss`` is a known name or a callable.

    The one check of loss names: ``TrainingLoop`` construction and every backend's
    resolution go through it, so they accept and suggest the same names.
    """
    if isinstance(loss, str):
        if loss not in LOSS_NAMES:
            raise unknown_loss_error(loss, field, error_field=error_field)
        return
    if not callable(loss):
        raise ConfigError(
            f"{field} must be a loss name ({', '.join(LOSS_NAMES)}) or a callable "
            f"(pred, target) -> scalar, got {type(loss).__name__}",
            field=error_field or field,
        )


def align_shapes(
    name: str,
    pred_shape: tuple[int, ...],
    target_shape: tuple[int, ...],
    *,
    field: str = "TrainingLoop.loss",
    expected: str = "they must have the same shape",
) -> str:
    """How an elementwise loss aligns a prediction with its target, by shapes alone.

    The one shape rule of every backend (array-library free, so Lightning and Keras apply it
    to a probe batch's shapes before training): equal shapes are ``"same"``; a trailing axis
    of size 1 on the prediction (``(n, 1)`` against ``(n,)``) is ``"expand_target"``; one on
    the target is ``"squeeze_target"``. Any other pair — in particular one that would
    *broadcast* to ``(n, n)`` and train a wrong model — raises :class:`ConfigError` naming
    both shapes.
    """
    pred_shape, target_shape = tuple(pred_shape), tuple(target_shape)
    if pred_shape == target_shape:
        return "same"
    if pred_shape == target_shape + (1,):
        return "expand_target"
    if target_shape == pred_shape + (1,):
        return "squeeze_target"
    raise ConfigError(
        f"{field}: loss {name!r} got predictions of shape {pred_shape} and targets of shape "
        f"{target_shape}; {expected} (a trailing axis of size 1 on either side is aligned; "
        f"pairs that would broadcast are refused)",
        field=field,
    )
