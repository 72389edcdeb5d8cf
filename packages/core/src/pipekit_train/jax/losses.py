"""JAX implementations of the loss names in :mod:`pipekit_train.losses`.

Each loss takes the whole batch — ``pred`` as the vmapped model returns it and
``target`` as the dataset gives it — and returns the mean over all elements, a
float scalar. Shapes are checked when the loss is traced (so a backend that
traces its step with ``jax.eval_shape`` reports them before compiling); in particular a
``(batch, 1)`` prediction against a ``(batch,)`` target is aligned instead of
silently broadcasting to ``(batch, batch)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.jax._deps import missing_jax_extra
from pipekit_train.losses import (
    CLASSIFICATION_LOSSES,
    LOSS_NAMES,
    align_shapes,
    is_classification,
    validate_loss,
)

try:
    import jax.numpy as jnp
    import optax
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = [
    "LOSS_NAMES",
    "CLASSIFICATION_LOSSES",
    "is_classification",
    "resolve_loss",
    "resolve_accuracy",
    "cross_entropy",
    "binary_cross_entropy",
    "mse",
    "mae",
    "huber",
]

LossFn = Callable[[Any, Any], Any]


def _shape_error(name: str, pred: Any, target: Any, expected: str, field: str) -> ConfigError:
    return ConfigError(
        f"{field}: loss {name!r} got predictions of shape {tuple(pred.shape)} "
        f"({pred.dtype}) and targets of shape {tuple(target.shape)} ({target.dtype}); "
        f"{expected}",
        field=field,
    )


def _align(name: str, pred: Any, target: Any, field: str) -> tuple[Any, Any]:
    """Same shape for elementwise losses; a trailing size-1 axis on either side is dropped."""
    pred = jnp.asarray(pred)
    target = jnp.asarray(target)
    try:
        how = align_shapes(name, pred.shape, target.shape, field=field)
    except ConfigError:
        raise _shape_error(name, pred, target, "they must have the same shape", field) from None
    if how == "expand_target":
        return pred, target[..., None]
    if how == "squeeze_target":
        return pred, target[..., 0]
    return pred, target


def _float_pred(name: str, pred: Any, field: str) -> Any:
    pred = jnp.asarray(pred)
    if not jnp.issubdtype(pred.dtype, jnp.floating):
        raise ConfigError(
            f"{field}: loss {name!r} needs floating-point predictions, got {pred.dtype}",
            field=field,
        )
    return pred


def _make_cross_entropy(field: str) -> LossFn:
    def cross_entropy(pred: Any, target: Any) -> Any:
        """Softmax cross-entropy from logits; integer labels or one-hot/soft float labels."""
        logits = _float_pred("cross_entropy", pred, field)
        labels = jnp.asarray(target)
        if logits.ndim < 1:
            raise _shape_error(
                "cross_entropy",
                logits,
                labels,
                "predictions must be logits (batch, classes)",
                field,
            )
        if labels.shape == logits.shape and jnp.issubdtype(labels.dtype, jnp.floating):
            return jnp.mean(optax.softmax_cross_entropy(logits, labels.astype(logits.dtype)))
        if labels.shape == logits.shape[:-1] + (1,) and logits.shape[-1] != 1:
            labels = labels[..., 0]
        if labels.shape == logits.shape[:-1]:
            if not jnp.issubdtype(labels.dtype, jnp.integer):
                labels = labels.astype(jnp.int32)  # float class indices, e.g. 2.0
            return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, labels))
        raise _shape_error(
            "cross_entropy",
            logits,
            labels,
            "targets must be integer labels of shape predictions.shape[:-1] or one-hot "
            "float labels of the predictions' shape",
            field,
        )

    return cross_entropy


def _make_binary_cross_entropy(field: str) -> LossFn:
    def binary_cross_entropy(pred: Any, target: Any) -> Any:
        """Sigmoid cross-entropy from logits against 0/1 (or probability) targets."""
        logits = _float_pred("binary_cross_entropy", pred, field)
        logits, labels = _align("binary_cross_entropy", logits, target, field)
        return jnp.mean(optax.sigmoid_binary_cross_entropy(logits, labels.astype(logits.dtype)))

    return binary_cross_entropy


def _make_elementwise(name: str, elementwise: Callable[[Any], Any], field: str) -> LossFn:
    def loss(pred: Any, target: Any) -> Any:
        pred = _float_pred(name, pred, field)
        pred, target = _align(name, pred, target, field)
        return jnp.mean(elementwise(pred - target.astype(pred.dtype)))

    loss.__name__ = loss.__qualname__ = name
    return loss


def _huber(error: Any, delta: float = 1.0) -> Any:
    abs_error = jnp.abs(error)
    quadratic = jnp.minimum(abs_error, delta)
    return 0.5 * quadratic**2 + delta * (abs_error - quadratic)


_FACTORIES: dict[str, Callable[[str], LossFn]] = {
    "cross_entropy": _make_cross_entropy,
    "binary_cross_entropy": _make_binary_cross_entropy,
    "mse": lambda field: _make_elementwise("mse", jnp.square, field),
    "mae": lambda field: _make_elementwise("mae", jnp.abs, field),
    "huber": lambda field: _make_elementwise("huber", _huber, field),
}
assert set(_FACTORIES) == set(LOSS_NAMES)

cross_entropy = _FACTORIES["cross_entropy"]("TrainingLoop.loss")
binary_cross_entropy = _FACTORIES["binary_cross_entropy"]("TrainingLoop.loss")
mse = _FACTORIES["mse"]("TrainingLoop.loss")
mae = _FACTORIES["mae"]("TrainingLoop.loss")
huber = _FACTORIES["huber"]("TrainingLoop.loss")


def resolve_loss(loss: str | LossFn, field: str = "TrainingLoop.loss") -> LossFn:
    """A loss name → its JAX implementation; a callable is returned unchanged.

    Unknown names (and anything neither a string nor callable) raise
    :class:`ConfigError` naming ``field`` and listing the valid names.
    """
    validate_loss(loss, field=field)
    if isinstance(loss, str):
        return _FACTORIES[loss](field)
    return loss


def resolve_accuracy(loss: Any) -> LossFn | None:
    """Accuracy ``(pred, target) -> scalar`` for a classification loss name, else ``None``.

    ``cross_entropy``: argmax of the logits against integer (or one-hot) labels;
    ``binary_cross_entropy``: ``logit > 0`` against ``target > 0.5``.
    """
    if not is_classification(loss):
        return None
    if loss == "cross_entropy":

        def accuracy(pred: Any, target: Any) -> Any:
            logits = jnp.asarray(pred)
            labels = jnp.asarray(target)
            if labels.shape == logits.shape and jnp.issubdtype(labels.dtype, jnp.floating):
                labels = jnp.argmax(labels, axis=-1)
            elif labels.shape == logits.shape[:-1] + (1,):
                labels = labels[..., 0]
            return jnp.mean(jnp.argmax(logits, axis=-1) == labels)

        return accuracy

    def binary_accuracy(pred: Any, target: Any) -> Any:
        logits, labels = _align("binary_cross_entropy", pred, target, "TrainingLoop.loss")
        return jnp.mean((logits > 0) == (labels > 0.5))

    return binary_accuracy
