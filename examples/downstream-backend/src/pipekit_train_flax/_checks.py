"""What the flax-nnx backend refuses before anything compiles, traced with ``jax.eval_shape``.

The module's forward pass and the loss run abstractly on the first training batch (and
on one validation batch): a model that does not fit the data, a loss that is not a
scalar, or labels outside the head are each a ``PipekitError`` naming the field, not a
JAX error from inside the first compiled call.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from pipekit_train.engine import check_labels, eval_batches, output_width
from pipekit_train.errors import ConfigError, DataError, PipekitError
from pipekit_train.losses import is_classification

from ._model import ModelParts
from ._step import LossFn, forward, predict

__all__ = [
    "check_first_batch",
    "check_labels_fit",
    "check_val_batch",
    "refuse_unsupported_fields",
]


def refuse_unsupported_fields(loop: Any) -> None:
    """``task`` and ``sharding``, which this backend does not implement, named."""
    if loop.task is not None:
        raise ConfigError(
            "TrainingLoop.task is not supported by the flax-nnx backend; give "
            "TrainingLoop.loss (a loss name such as 'cross_entropy', or a callable "
            "loss(pred, y) -> scalar) and let the module map batch['x'] to predictions",
            field="task",
        )
    if loop.sharding is not None:
        raise ConfigError(
            "TrainingLoop.sharding is not supported by the flax-nnx backend (it trains on "
            "one device); leave sharding unset",
            field="sharding",
        )


def _describe(batch: dict[str, Any]) -> str:
    return ", ".join(
        f"{k!r}: {np.asarray(v).dtype}{list(np.shape(v)[1:])}" for k, v in batch.items()
    )


def check_first_batch(
    parts: ModelParts, loss: LossFn, batch: dict[str, Any], key: jax.Array
) -> Any:
    """Trace forward + loss on ``batch``; return the prediction's abstract shape."""
    try:
        pred = jax.eval_shape(
            lambda p, r, x: forward(parts, p, r, x, key)[0], parts.params, parts.rest, batch["x"]
        )
    except PipekitError:
        raise
    except Exception as exc:  # the user's module does not take this batch
        raise ConfigError(
            f"TrainingLoop.model_op: the module's forward pass failed on one training batch "
            f"{{{_describe(batch)}}}: {type(exc).__name__}: {exc}",
            field="model_op",
        ) from exc
    try:
        value = jax.eval_shape(loss, pred, batch["y"])
    except PipekitError:
        raise
    except Exception as exc:  # a callable loss that fails on (pred, y)
        raise ConfigError(
            f"TrainingLoop.loss failed on predictions {pred.shape} {pred.dtype} and targets "
            f"{np.shape(batch['y'])}: {type(exc).__name__}: {exc}",
            field="loss",
        ) from exc
    if getattr(value, "shape", None) != ():
        raise ConfigError(
            f"TrainingLoop.loss must return a scalar, but it returns an array of shape "
            f"{getattr(value, 'shape', '?')}; reduce it (e.g. with .mean())",
            field="loss",
        )
    return pred


def check_labels_fit(loop: Any, pred: Any, source: Any, val: Any) -> None:
    """Classification labels against the head's width (core's ``check_labels``)."""
    if not is_classification(loop.loss):
        return
    width = output_width(pred.shape)
    data = source.data
    y = data.get("y") if isinstance(data, dict) else source[0].get("y")
    check_labels(y, width, loop.loss, field="TrainingLoop.dataset")
    if val is not None:
        val_y = val.get("y") if isinstance(val, dict) else next(eval_batches(val, 1)).get("y")
        check_labels(val_y, width, loop.loss, field="TrainingLoop.val_dataset")


def check_val_batch(
    parts: ModelParts, loss: LossFn, val: Any, train_batch: dict[str, Any], batch_size: int
) -> None:
    """Trace the evaluation on one ``val_dataset`` batch (a misfit is a ``DataError``)."""
    val_batch = next(iter(eval_batches(val, batch_size)))
    try:
        jax.eval_shape(
            lambda p, r, b: loss(predict(parts, p, r, b["x"]), b["y"]),
            parts.params,
            parts.rest,
            val_batch,
        )
    except PipekitError:
        raise
    except Exception as exc:
        raise DataError(
            f"TrainingLoop.val_dataset does not fit the model: its records are "
            f"{{{_describe(val_batch)}}}, TrainingLoop.dataset's {{{_describe(train_batch)}}}; "
            f"give val_dataset the same fields and per-example shapes "
            f"({type(exc).__name__}: {exc})"
        ) from exc
