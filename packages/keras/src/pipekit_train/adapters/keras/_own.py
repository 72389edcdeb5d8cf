"""Bring your own Keras model: what its ``compile()`` and its class say is used.

A model the user ``compile()``d keeps its optimiser (the instance, so its state and
schedule), loss, ``loss_weights``, ``metrics`` and ``weighted_metrics``: the backend
compiles it again with exactly those (to set ``steps_per_execution`` and pipekit's per-step
loss tracker). A subclassed model's own ``train_step`` / ``compute_loss`` run, because
``fit`` calls them. A loop field that would contradict the model — ``loss=`` or a
``KerasTask`` beside a compiled loss, an ``optimizer_config`` other than the default beside
a compiled optimiser, ``accumulate_steps`` / ``ema_decay`` that would have to rebuild the
user's optimiser — is a ``ConfigError`` naming both sides, raised before compiling
(docs/decisions/0074-users-object-wins-or-config-error.md,
docs/decisions/0109-keras-compiled-model-is-the-users.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pipekit_train.errors import ConfigError
from pipekit_train.loop import DEFAULT_OPTIMIZER

from ._optim import rates_of
from ._private import compile_config, learning_rate_schedule

__all__ = [
    "OwnCompile",
    "loss_callable",
    "mark_compiled_by_pipekit",
    "own_compile",
    "own_rates",
    "own_steps_per_execution",
    "overrides",
]

_MARK = "_pipekit_compile_config"


@dataclass
class OwnCompile:
    """The user's ``compile()`` arguments that the run keeps."""

    optimizer: Any
    loss: Any
    extra: dict[str, Any] = field(default_factory=dict)  # loss_weights, metrics, …
    steps_per_execution: int = 1


def overrides(keras: Any, model: Any, name: str) -> bool:
    """Whether ``model``'s class defines its own ``name`` (not ``keras.Model``'s)."""
    return getattr(type(model), name, None) is not getattr(keras.Model, name, None)


def mark_compiled_by_pipekit(model: Any) -> None:
    """Remember pipekit's own ``compile``, so a second run does not take it for the user's."""
    object.__setattr__(model, _MARK, compile_config(model))


def _user_config(model: Any) -> dict[str, Any] | None:
    if not getattr(model, "compiled", False):
        return None
    config = compile_config(model)
    if config is None or config is getattr(model, _MARK, None):
        return None
    return dict(getattr(config, "config", {}))


def own_compile(keras: Any, loop: Any, model: Any) -> OwnCompile | None:
    """The user's compile (checked against the loop's fields), or None if there is none."""
    from ._losses import KerasTask

    config = _user_config(model)
    if config is None:
        return None
    name = type(model).__name__
    loss = config.get("loss")
    if loss is not None and loop.loss is not None:
        raise ConfigError(
            f"TrainingLoop.model_op ({name}) was compile()d with loss={loss!r} and "
            f"TrainingLoop.loss={loop.loss!r} says another; drop loss= (the compiled loss is "
            "used) or compile the model without a loss",
            field="loss",
        )
    if loss is not None and isinstance(loop.task, KerasTask):
        raise ConfigError(
            f"TrainingLoop.model_op ({name}) was compile()d with loss={loss!r} and "
            f"TrainingLoop.task is a KerasTask with loss={loop.task.loss!r}; drop task= "
            "(the compiled loss, metrics and loss_weights are used) or compile without a loss",
            field="task",
        )
    optimizer = model.optimizer
    opt_name = type(optimizer).__name__
    if dict(loop.optimizer_config) != DEFAULT_OPTIMIZER:
        raise ConfigError(
            f"TrainingLoop.optimizer_config={loop.optimizer_config!r} and the optimiser "
            f"model_op ({name}) was compile()d with ({opt_name}) both say which optimiser "
            "trains it; drop optimizer_config to keep the compiled one, or give "
            "optimizer_config with an uncompiled model (the loop then compiles it)",
            field="optimizer_config",
        )
    for attr, fix in (
        ("accumulate_steps", f"gradient_accumulation_steps= on your {opt_name}"),
        ("ema_decay", f"use_ema=True, ema_momentum= on your {opt_name}"),
    ):
        default = 1 if attr == "accumulate_steps" else None
        if getattr(loop, attr) != default:
            raise ConfigError(
                f"TrainingLoop.{attr}={getattr(loop, attr)!r} would rebuild the optimiser "
                f"model_op ({name}) was compile()d with ({opt_name}); set {fix} instead, or "
                "give an uncompiled model",
                field=attr,
            )
    extra = {
        k: config[k]
        for k in ("loss_weights", "metrics", "weighted_metrics", "run_eagerly", "jit_compile")
        if config.get(k) is not None
    }
    spe = config.get("steps_per_execution") or 1
    return OwnCompile(optimizer=optimizer, loss=loss, extra=extra, steps_per_execution=int(spe))


def own_steps_per_execution(loop: Any, own: OwnCompile, options: Any) -> int:
    """The compile's ``steps_per_execution``, unless ``backend_options`` says another."""
    if "steps_per_execution" not in loop.backend_options:
        return own.steps_per_execution
    if own.steps_per_execution not in (1, options.steps_per_execution):
        raise ConfigError(
            f"backend_options.steps_per_execution={options.steps_per_execution} and the "
            f"steps_per_execution={own.steps_per_execution} model_op was compile()d with "
            "disagree; drop one of the two",
            field="backend_options.steps_per_execution",
        )
    return int(options.steps_per_execution)


def loss_callable(keras: Any, loss: Any) -> Any:
    """The compiled loss as a scalar ``fn(y_true, y_pred)``, reduced as ``compile`` reduces
    it; None for a per-output dict or list."""
    if isinstance(loss, (dict, list, tuple)):
        return None
    from ._losses import reduced_loss

    try:
        fn = keras.losses.get(loss) if isinstance(loss, str) else loss
    except ValueError:
        fn = None
    if fn is None or not callable(fn):
        raise ConfigError(
            f"TrainingLoop.model_op was compile()d with loss={loss!r}, which is not a Keras "
            "loss; compile it with a Keras loss name, object or fn(y_true, y_pred)",
            field="model_op",
        )
    if isinstance(fn, keras.losses.Loss):
        return fn
    # A name or a function gives one value per sample; compile reduces it (as here).
    return reduced_loss(keras, fn, loss if isinstance(loss, str) else _name_of(fn))


def _name_of(fn: Any) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def own_rates(keras: Any, optimizer: Any) -> Any:
    """``rates(steps)`` of the user's optimiser: its schedule at each step, or its rate.

    A schedule is evaluated on the host, vectorised, at each host event (as the loop's);
    a constant rate is read once, when the run starts.
    """
    schedule = learning_rate_schedule(optimizer)
    if not isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        return _ConstantRate(optimizer)
    return rates_of(schedule)


class _ConstantRate:
    """``rates(steps)`` of a constant rate that the user's callbacks may change (e.g.
    ``ReduceLROnPlateau``): ``refresh(step)`` (state synced) reads it after ``step``."""

    def __init__(self, optimizer: Any) -> None:
        self.optimizer = optimizer
        self.changes: list[tuple[int, float]] = [(0, self._read())]

    def _read(self) -> float:
        rate = self.optimizer.learning_rate
        return float(np.asarray(getattr(rate, "value", rate)))

    def refresh(self, step: int) -> None:
        rate = self._read()
        if rate != self.changes[-1][1]:
            self.changes.append((int(step), rate))

    def __call__(self, steps: list[int]) -> list[float]:
        out = []
        for step in steps:  # the rate set after the last change before this step
            out.append(next(r for s, r in reversed(self.changes) if s < step or s == 0))
        return out
