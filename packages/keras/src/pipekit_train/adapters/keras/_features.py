"""The loop's training-feature fields on Keras: accumulation, EMA of the weights, precision.

- ``accumulate_steps=k`` → the optimiser's ``gradient_accumulation_steps=k`` (Keras
  divides the summed gradients by ``k``: the mean, as ``optax.MultiSteps``). Keras
  counts micro-batches, so the backend feeds ``max_steps * k`` of them and converts
  every cadence back to optimiser updates (``_bridge``, ``_data``, ``_optim``).
- ``ema_decay=d`` → ``use_ema=True, ema_momentum=d`` with no overwrite frequency.
  Keras' own average update starts at the first update's weights and, under
  accumulation, runs after every *micro-batch*; :func:`install_ema` replaces it on the
  optimiser instance with the loop's rule (start at the initial weights, one update
  ``ema = d * ema + (1 - d) * params`` per optimiser update, computed in float32), so
  the average is the Equinox backend's. The averages are optimiser variables, so they
  are checkpointed with the optimiser and restored bit for bit.
- ``precision="mixed-bfloat16"`` → every layer's policy becomes ``mixed_bfloat16``
  (float32 variables, bfloat16 compute) for the run only (:func:`precision_scope`);
  the global policy is never touched. ``"bfloat16"`` needs a model *built* in bfloat16:
  Keras fixes a variable's dtype when it is made.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from pipekit_train.errors import ConfigError
from pipekit_train.loop import FEATURE_DEFAULTS, require_features
from pipekit_train.optimizers import parse_optimizer_config

from ._private import (
    ema_averages,
    flatten_layers,
    micro_batch_count,
    optimizer_variables_order,
    replace_ema_update,
)

__all__ = [
    "BFLOAT16_BROKEN_OPTIMIZERS",
    "check_features",
    "ema_values",
    "finalize_ema",
    "install_ema",
    "precision_scope",
]

#: Keras optimisers that make no (adam, adamw, amsgrad) or NaN (nadam, lamb) updates
#: on bfloat16 variables: they cast ``beta_2 = 0.999`` to the variable's dtype, where it
#: is 1.0 (measured with keras 3.15 on the digits MLP).
BFLOAT16_BROKEN_OPTIMIZERS = ("adam", "adamw", "amsgrad", "nadam", "lamb")


def _float_dtypes(variables: list[Any]) -> set[str]:
    return {str(v.dtype) for v in variables if "float" in str(v.dtype)}


def check_features(loop: Any, model: Any, steps_per_execution: int) -> None:
    """Refuse, before ``compile``, any feature setting Keras cannot honour (by field)."""
    require_features(loop, supported=tuple(FEATURE_DEFAULTS), backend="keras")
    if loop.accumulate_steps > 1 and steps_per_execution > 1:
        raise ConfigError(
            f"backend_options.steps_per_execution={steps_per_execution} with "
            f"TrainingLoop.accumulate_steps={loop.accumulate_steps}: Keras would run the "
            "callbacks once per group of micro-batches, not at optimiser updates; drop "
            "steps_per_execution (or accumulate_steps)",
            field="backend_options.steps_per_execution",
        )
    dtypes = _float_dtypes(list(model.trainable_variables))
    if loop.precision == "mixed-bfloat16" and dtypes - {"float32"}:
        raise ConfigError(
            "TrainingLoop.precision='mixed-bfloat16' keeps the parameters in float32, but "
            f"model_op has {', '.join(sorted(dtypes))} variables; build the model under "
            "the default float32 policy (the backend sets mixed_bfloat16 on its layers "
            "for the run)",
            field="precision",
        )
    if loop.precision == "bfloat16":
        if dtypes != {"bfloat16"}:
            raise ConfigError(
                "TrainingLoop.precision='bfloat16' needs a model built in bfloat16, but "
                f"model_op has {', '.join(sorted(dtypes)) or 'no floating'} variables: "
                "Keras fixes a variable's dtype when it is created. Build the model under "
                "keras.config.set_dtype_policy('bfloat16') (and set it back) or give "
                "dtype='bfloat16' to every layer; or use precision='mixed-bfloat16'",
                field="precision",
            )
        name = parse_optimizer_config(loop.optimizer_config, max_steps=loop.max_steps).name
        if name in BFLOAT16_BROKEN_OPTIMIZERS:
            raise ConfigError(
                f"TrainingLoop.precision='bfloat16' with optimizer_config.name={name!r}: "
                "Keras computes that optimiser's beta_2 power in the variables' dtype, where "
                "0.999 is 1.0, so it makes no (or NaN) updates; use precision="
                "'mixed-bfloat16' (float32 parameters), or an optimiser that trains in "
                "bfloat16 on Keras (sgd, rmsprop, lion, adamax, adagrad, adafactor)",
                field="precision",
            )


def _layers(model: Any) -> list[Any]:
    # Keras' recursive layer walk (every nested layer, the model itself first).
    return flatten_layers(model)


@contextlib.contextmanager
def precision_scope(model: Any, precision: str) -> Iterator[None]:
    """``mixed-bfloat16``: every float32 layer computes in bfloat16 inside the block.

    Each layer's own policy is set (not the global one, which a built layer no longer
    reads) and put back on exit, so the trained model runs in float32 again and
    nothing leaks into the user's process.
    """
    if precision != "mixed-bfloat16":
        yield
        return
    saved = [(layer, layer.dtype_policy) for layer in _layers(model)]
    try:
        for layer, policy in saved:
            if policy.name == "float32":
                layer.dtype_policy = "mixed_bfloat16"
        yield
    finally:
        for layer, policy in saved:
            layer.dtype_policy = policy


def install_ema(keras: Any, optimizer: Any, decay: float, accumulate: int) -> None:
    """Give a built ``use_ema`` optimiser the loop's EMA rule, and start it at the weights.

    Replaces Keras' ``_update_model_variables_moving_average`` on this instance (the
    method its JAX ``apply`` calls after each micro-batch) with one that updates only
    at optimiser updates, and sets every average to the current trainable value.
    """
    ops = keras.ops
    averages = ema_averages(optimizer)
    for variable, average in zip(optimizer_variables_order(optimizer), averages, strict=True):
        if average is not None:  # a host copy: Keras donates both buffers to the step
            average.assign(np.array(variable.value, copy=True))

    def update(trainable_variables: list[Any]) -> None:
        due = None
        if accumulate > 1:  # the k-th micro-batch, before Keras increments _iterations
            due = ops.equal(ops.mod(micro_batch_count(optimizer) + 1, accumulate), 0)
        for variable, average in zip(trainable_variables, averages, strict=True):
            if average is None:
                continue
            old = ops.cast(average.value, "float32")
            new = old * decay + ops.cast(variable.value, "float32") * (1.0 - decay)
            if due is not None:
                new = ops.where(due, new, old)
            average.assign(ops.cast(new, average.dtype))

    replace_ema_update(optimizer, update)


def ema_values(optimizer: Any) -> list[Any]:
    """The averaged weights, in ``model.trainable_variables`` order (for evaluation)."""
    return [a.value for a in ema_averages(optimizer)]


def finalize_ema(model: Any) -> None:
    """Overwrite the model's trainable weights with their averages (the trained op's)."""
    model.optimizer.finalize_variable_values(model.trainable_weights)
