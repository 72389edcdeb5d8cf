"""Labels checked against the model's output width, for the classification loss names.

A backend calls :func:`check_labels` once before training, with the label column of
the dataset (all of it when it is in memory; one batch of a lazily read source) and
the width of the model's output (its last axis), which each backend finds without
compiling: Equinox with ``eqx.filter_eval_shape`` of the model on one batch, Keras and
Lightning from the one eager forward on a real batch they already run to check that
the data fits the model. What is refused, before anything compiles:

- ``cross_entropy`` with a 1-wide head: softmax over one logit is always 1, so the loss
  is 0 and nothing trains (``ConfigError`` naming ``model_op``, with the two fixes);
- integer labels outside ``[0, width)`` (``DataError`` naming the dataset field: an
  out-of-range label is silently clipped or gathered out of bounds by the libraries);
- fractional labels where the loss does not declare them: ``cross_entropy`` takes
  integer labels ``(batch,)`` or one row of class probabilities per example
  ``(batch, classes)``; ``binary_cross_entropy`` takes 0/1 labels or probabilities,
  so only values outside ``[0, 1]`` are refused there.

A callable loss and the regression names declare nothing, so nothing is checked.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.errors import ConfigError, DataError
from pipekit_train.losses import is_classification

from ._data_forms import _numpy

__all__ = ["check_labels", "output_width"]


def output_width(shape: Any) -> int | None:
    """The width of a model output of ``shape`` (its last axis; 1 for a ``(batch,)`` output)."""
    dims = tuple(int(d) for d in shape)
    if not dims:
        return None
    return dims[-1] if len(dims) > 1 else 1


def check_labels(y: Any, width: int | None, loss: Any, *, field: str) -> None:
    """Refuse labels that ``loss`` cannot read against a head of ``width`` outputs.

    ``y`` is the label column (numpy-convertible, rows first) or ``None``; ``width`` the
    model output's last axis, or ``None`` when unknown (then only the label values are
    checked); ``field`` the user-facing dataset name (``"TrainingLoop.dataset"``).
    """
    if y is None or not is_classification(loss):
        return
    np = _numpy()
    y = np.asarray(y)
    if y.dtype.kind not in "biuf" or y.size == 0:
        return
    if loss == "binary_cross_entropy":
        low, high = y.min(), y.max()
        if low < 0 or high > 1:
            raise DataError(
                f"{field}['y'] holds values in [{low}, {high}], but "
                "TrainingLoop.loss='binary_cross_entropy' takes 0/1 labels or probabilities "
                "in [0, 1]; for several classes use integer labels with loss='cross_entropy'."
            )
        return
    if width is not None and width < 2:
        raise ConfigError(
            f"TrainingLoop.loss='cross_entropy' needs one output (logit) per class, but "
            f"TrainingLoop.model_op's output is {width} wide: a softmax over one logit is "
            "always 1, so the loss is 0 and nothing trains. Give the last layer one output "
            "per class (Dense(n_classes), nn.Linear(..., n_classes), eqx.nn.Linear(..., "
            "n_classes)), or, for a binary task with one logit, use "
            "loss='binary_cross_entropy'.",
            field="model_op",
        )
    soft = y.dtype.kind == "f" and y.ndim >= 2 and y.shape[-1] > 1
    if soft:
        _check_soft(y, field)
        return
    if y.dtype.kind == "f":
        fractional = y != np.round(y)
        if fractional.any():
            row = int(np.argmax(fractional.reshape(y.shape[0], -1).any(axis=1))) if y.ndim else 0
            raise DataError(
                f"{field}['y'] holds fractional labels (first at row {row}: "
                f"{y.reshape(y.shape[0], -1)[row] if y.ndim else y}), and "
                "TrainingLoop.loss='cross_entropy' reads a (batch,) label column as integer "
                "class indices. Give integer labels (y.astype(int)), or soft labels as one "
                "row of class probabilities per example, shape (batch, n_classes)."
            )
    low, high = int(y.min()), int(y.max())
    if low < 0 or (width is not None and high >= width):
        bound = f"[0, {width - 1}]" if width is not None else "0 or more"
        bad = (y < 0) | (y >= width) if width is not None else y < 0
        row = int(np.argmax(bad.reshape(y.shape[0], -1).any(axis=1))) if y.ndim else 0
        raise DataError(
            f"{field}['y'] holds labels in [{low}, {high}] (first out of range at row {row}), "
            f"but TrainingLoop.model_op's output is {width} wide, so "
            f"TrainingLoop.loss='cross_entropy' needs labels in {bound}. Widen the last "
            "layer to the number of classes, or re-encode the labels as 0 … n_classes-1."
        )


def _check_soft(y: Any, field: str) -> None:
    """Soft (or one-hot) labels: one row of probabilities per example.

    Their width against the head is a shape mismatch, which every backend's one-batch
    loss check already reports with both shapes; only the values are checked here.
    """
    low, high = float(y.min()), float(y.max())
    if low < 0 or high > 1:
        raise DataError(
            f"{field}['y'] holds soft labels in [{low}, {high}]; soft labels for "
            "TrainingLoop.loss='cross_entropy' are class probabilities in [0, 1] (one row "
            "per example)."
        )
