"""What only the keras backend can check, before ``fit``: model, loss, data, cadence."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipekit_train.engine import event_intervals, output_width
from pipekit_train.errors import ConfigError, DataError, PipekitError
from pipekit_train.losses import align_shapes

from ._data import to_xy
from ._losses import KerasTask, crossentropy_by_shapes, reduced_loss, resolve_keras_loss

__all__ = [
    "unwrap_model",
    "check_fits",
    "compile_loss",
    "check_steps_per_execution",
    "resolve_crossentropy",
]


def unwrap_model(keras: Any, model_op: Any) -> Any:
    """The ``keras.Model`` of a ``KerasModelOp`` (or the bare model); else ``ConfigError``."""
    model = getattr(model_op, "model", model_op)
    if not isinstance(model, keras.Model):
        raise ConfigError(
            "TrainingLoop.model_op must be a keras.Model or a KerasModelOp for the keras "
            f"backend; got {type(model_op).__name__}",
            field="model_op",
        )
    return model


def _describe(batch: dict[str, Any]) -> str:
    return ", ".join(f"{k}: {np.asarray(v).dtype}{list(np.shape(v))}" for k, v in batch.items())


def check_fits(
    model: Any,
    loss_fn: Any,
    batch: dict[str, Any],
    field: str,
    *,
    label: str = "TrainingLoop.loss",
    loss_field: str = "loss",
    elementwise: str | None = None,
) -> int | None:
    """Run the model (inference mode) and the loss on one real batch; return the head's width.

    A model that cannot take the batch is a ``DataError`` naming ``field``; a loss
    that cannot compare the output with the targets, or is not a scalar, is a
    ``ConfigError`` naming the loss as ``label`` says (``TrainingLoop.loss``, or the loss
    ``model_op`` was compiled with). For an ``elementwise`` loss (its name), the
    prediction/target shapes must align by core's rule (``losses.align_shapes``): Keras
    would broadcast ``(n, 1)`` against ``(n, 5)`` silently. Inference mode draws no
    dropout randomness, so this changes no state that training depends on. A model whose
    layers are all built is traced (:func:`_traced_shapes`: shapes only, nothing compiled
    or run); any other, or one whose trace fails, is called eagerly, which reports the
    error. The width (the output's last axis) is read from this one call — cheaper and
    surer than ``model.compute_output_shape``, which a subclassed model need not
    implement — and the label checks use it (``pipekit_train.engine.check_labels``);
    ``None`` for a model with several outputs.
    """
    x, y = to_xy(batch)
    traced = _traced_shapes(model, loss_fn, x, y)
    if traced is not None:
        pred, value = traced
    else:
        pred = _call_model(model, x, batch, field)
    shape = getattr(pred, "shape", None)
    width = output_width(shape) if shape is not None else None
    if loss_fn is None:  # the model's own train_step / per-output loss: Keras checks it
        return width
    if elementwise is not None and shape is not None and not isinstance(y, dict):
        try:
            align_shapes(
                elementwise,
                tuple(shape),
                tuple(np.shape(y)),
                field=label,
                expected=f"give targets of {field} in the model's output shape {tuple(shape)}",
            )
        except ConfigError as exc:  # the field the user set, as every loss error here
            raise ConfigError(str(exc), field=loss_field) from None
    if traced is None:
        try:
            value = loss_fn(y, pred)
        except PipekitError:
            raise
        except Exception as exc:
            raise ConfigError(
                f"{label} cannot compare the model's output {tuple(pred.shape)} with "
                f"the targets of {field} ({_describe(batch)}): {type(exc).__name__}: {exc}",
                field=loss_field,
            ) from exc
    if tuple(getattr(value, "shape", ())) != ():
        raise ConfigError(
            f"{label} must return a scalar, but it returns shape "
            f"{tuple(value.shape)}; reduce it (e.g. with .mean())",
            field=loss_field,
        )
    return width


def _call_model(model: Any, x: Any, batch: dict[str, Any], field: str) -> Any:
    """``model(x)`` in inference mode; a model that cannot take the batch is a DataError."""
    try:
        return model(x, training=False)
    except Exception as exc:
        raise DataError(
            f"TrainingLoop.{field} does not fit the model: calling it on one batch "
            f"({_describe(batch)}) failed: {type(exc).__name__}: {exc}. Give x with the "
            "shape and dtype the model's input expects"
        ) from exc


_CROSSENTROPY_RULE = (
    "it is binary_crossentropy when the model's output has a last axis of 1 (0/1 targets "
    "of the output's shape, or without that axis), sparse_categorical_crossentropy when "
    "the targets have one axis less than the output, or a last axis of 1 against a wider "
    "output (integer class ids), else categorical_crossentropy (one-hot targets of the "
    "output's shape)"
)


def resolve_crossentropy(
    keras: Any, model: Any, batch: dict[str, Any], name: str, *, label: str, loss_field: str
) -> Any:
    """``"crossentropy"`` / ``"ce"`` as the ``fn(y_true, y_pred)`` ``fit`` will train with.

    Keras builds the compiled loss from the first batch: the model's output shape and the
    targets' shape pick the cross-entropy (:func:`crossentropy_by_shapes`), reduced as
    ``compile`` reduces a loss function. Here the same batch, before compiling: the
    output's shape is traced (or the model called, as :func:`check_fits`) and the picked
    loss traced on the two shapes, so a pair Keras would refuse is a ``ConfigError``
    naming the compiled loss, what it became and what works. ``None`` for nested targets
    or outputs: Keras resolves the name per output then, as for a per-output loss.
    """
    x, y = to_xy(batch)
    traced = _traced_shapes(model, None, x, y)
    pred = traced[0] if traced is not None else _call_model(model, x, batch, "dataset")
    if isinstance(y, (dict, list, tuple)) or isinstance(pred, (dict, list, tuple)):
        return None
    t_shape, p_shape = tuple(np.shape(y)), tuple(pred.shape)
    if not t_shape or not p_shape:
        raise ConfigError(
            f"{label} is resolved from the shapes of the targets {t_shape} and the model's "
            f"output {p_shape}, and Keras needs both batched (one axis at least); "
            f"{_CROSSENTROPY_RULE}",
            field=loss_field,
        )
    picked = crossentropy_by_shapes(t_shape, p_shape)
    fn = reduced_loss(keras, getattr(keras.losses, picked), name)
    try:
        import jax

        target = jax.ShapeDtypeStruct(t_shape, np.asarray(y).dtype)
        jax.eval_shape(fn, target, jax.ShapeDtypeStruct(p_shape, pred.dtype))
    except Exception as exc:
        raise ConfigError(
            f"{label} becomes {picked} for targets of shape {t_shape} and the model's "
            f"output {p_shape} (Keras picks it from these shapes at the first batch), which "
            f"Keras refuses: {type(exc).__name__}: {exc}. As Keras resolves {name!r}, "
            f"{_CROSSENTROPY_RULE}; or compile with the loss you mean by its name",
            field=loss_field,
        ) from exc
    return fn


def _all_built(model: Any) -> bool:
    todo, seen = [model], set()
    while todo:
        layer = todo.pop()
        if id(layer) in seen:
            continue
        seen.add(id(layer))
        if not getattr(layer, "built", False):
            return False
        todo.extend(getattr(layer, "layers", ()) or ())
    return True


def _traced_shapes(model: Any, loss_fn: Any, x: Any, y: Any) -> tuple[Any, Any] | None:
    """The output's and the loss's shapes, traced (``jax.eval_shape``): nothing runs.

    The eager call :func:`check_fits` otherwise makes runs the model op by op, and JAX
    compiles each op on its first call: ~0.3-2 s of a fresh process that ``fit``, which
    compiles the whole step anyway, does not need. Only for a model whose layers are all
    built (tracing must create no variable), inside ``keras.StatelessScope`` (an
    assignment, e.g. a stateful RNN's, is dropped, not applied with a traced value).
    ``None`` when it cannot say — the model is not built, or tracing failed, for
    whatever reason — and the caller makes the eager call, which reports the error.
    """
    if not _all_built(model):
        return None
    try:
        import jax

        import keras

        def shapes(x: Any, y: Any) -> tuple[Any, Any]:
            pred = model(x, training=False)
            return pred, (None if loss_fn is None else loss_fn(y, pred))

        with keras.StatelessScope():
            pred, value = jax.eval_shape(shapes, x, y)
    except Exception:
        return None
    return pred, value


def compile_loss(keras: Any, loop: Any, first_y: Any) -> tuple[Any, Any]:
    """(what ``compile(loss=…)`` gets, the same as a ``(y_true, y_pred)`` function)."""
    if isinstance(loop.task, KerasTask):
        loss = loop.task.loss
        try:
            fn = keras.losses.get(loss) if isinstance(loss, str) else loss
        except ValueError:
            fn = None
        if fn is None or not callable(fn):
            raise ConfigError(
                f"TrainingLoop.task.loss {loss!r} is not a Keras loss", field="task.loss"
            )
        if not isinstance(fn, keras.losses.Loss):  # per sample: compile reduces it
            name = loss if isinstance(loss, str) else getattr(fn, "__name__", "loss")
            fn = reduced_loss(keras, fn, str(name))
        return loss, fn
    if loop.task is not None:
        raise ConfigError(
            "TrainingLoop.task must be a pipekit_train.adapters.keras.KerasTask for the keras "
            f"backend, got {type(loop.task).__name__}",
            field="task",
        )
    loss = resolve_keras_loss(keras, loop.loss, first_y)
    return loss, loss


def check_steps_per_execution(loop: Any, k: int) -> None:
    """Keras calls callbacks every ``k`` steps: every cadence must be a multiple of ``k``."""
    if k == 1:
        return
    for n in [*event_intervals(loop), loop.max_steps]:
        if n % k:
            raise ConfigError(
                f"backend_options.steps_per_execution={k}: Keras runs callbacks only every "
                f"{k} steps, so every cadence (log/eval/checkpoint every, max_steps) must be "
                f"a multiple of it, and {n} is not",
                field="backend_options.steps_per_execution",
            )
