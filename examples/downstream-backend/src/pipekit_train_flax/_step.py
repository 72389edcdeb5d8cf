"""The pure training step and the evaluation of an NNX module, over a plain-pytree carry.

The carry is ``(params, rest, opt_state, step)`` (see :mod:`._model`): every leaf an
array, so core's program builder can fuse, donate and checkpoint it like any other JAX
backend's. ``nnx.merge`` rebuilds the module inside the traced function; nothing of the
user's module object is mutated.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from pipekit_train.jax.optim import current_learning_rate

from ._model import ModelParts, reseeded, split_parts

__all__ = ["initial_carry", "make_step", "make_evaluate", "forward"]

LossFn = Callable[[Any, Any], Any]


def initial_carry(parts: ModelParts, optimizer: optax.GradientTransformation) -> tuple[Any, ...]:
    """``(params, rest, opt_state, step)`` at step 0, the optimiser initialised on ``params``."""
    return (parts.params, parts.rest, optimizer.init(parts.params), jnp.zeros((), jnp.int32))


def forward(parts: ModelParts, params: Any, rest: Any, x: Any, key: jax.Array) -> tuple[Any, Any]:
    """``(predictions, new_rest)`` of the module in training mode on the batch ``x``."""
    model = parts.merge(params, rest, reseeded(parts.rngs, key))
    pred = model(x)
    new_rest = split_parts(model)[3]
    return pred, new_rest


def make_step(
    parts: ModelParts, loss: LossFn, optimizer: optax.GradientTransformation
) -> Callable[[Any, Any, jax.Array], tuple[Any, dict[str, Any]]]:
    """The pure ``step(carry, batch, key) -> (carry, metrics)`` core's builder compiles."""

    def step(carry: Any, batch: Any, key: jax.Array) -> tuple[Any, dict[str, Any]]:
        params, rest, opt_state, n = carry

        def loss_of(p: Any) -> tuple[Any, Any]:
            pred, new_rest = forward(parts, p, rest, batch["x"], key)
            return loss(pred, batch["y"]), new_rest

        (value, new_rest), grads = jax.value_and_grad(loss_of, has_aux=True)(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        metrics = {"loss": value}
        lr = current_learning_rate(opt_state)
        if lr is not None:
            metrics["lr"] = lr
        return (params, new_rest, opt_state, n + 1), metrics

    return step


def predict(parts: ModelParts, params: Any, rest: Any, x: Any) -> Any:
    """The module's predictions in evaluation mode (``Module.eval()``: dropout off)."""
    model = parts.merge(params, rest)
    model.eval()
    return model(x)


def make_evaluate(
    parts: ModelParts, loss: LossFn, accuracy: LossFn | None
) -> Callable[[Any, Any], dict[str, Any]]:
    """``evaluate(carry, batch) -> {name: float32 scalar}`` of one validation batch, jitted."""

    def evaluate(carry: Any, batch: Any) -> dict[str, Any]:
        params, rest = carry[0], carry[1]
        pred = predict(parts, params, rest, batch["x"])
        out = {"loss": loss(pred, batch["y"])}
        if accuracy is not None:
            out["accuracy"] = accuracy(pred, batch["y"])
        return {k: jnp.asarray(v).astype(np.float32) for k, v in out.items()}

    return jax.jit(evaluate)
