"""The ``TrainTask`` protocol and the task synthesised from ``TrainingLoop.loss``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import equinox as eqx
import jax

from pipekit_train.jax.losses import resolve_accuracy


@runtime_checkable
class TrainTask(Protocol):
    """A user-defined Equinox training target.

    Provide ``loss_fn``; optionally ``eval_fn``. Without a task the backend
    synthesises one from ``TrainingLoop.loss``: the model is vmapped over
    ``batch["x"]`` and the loss compares the predictions with ``batch["y"]``.
    ``loss_fn`` returns the scalar loss and a dict of scalar metrics to log.
    """

    def loss_fn(
        self, model: eqx.Module, batch: Any, key: jax.Array
    ) -> tuple[jax.Array, dict[str, jax.Array]]: ...


class SupervisedTask(eqx.Module):
    """The task synthesised from a loss: ``loss(vmap(model)(x), y)``.

    Evaluation reports the loss and, for classification losses, accuracy.
    """

    loss: Callable[[jax.Array, jax.Array], jax.Array] = eqx.field(static=True)
    classification: str | None = eqx.field(static=True, default=None)

    def loss_fn(
        self, model: eqx.Module, batch: Any, key: jax.Array
    ) -> tuple[jax.Array, dict[str, jax.Array]]:
        pred = _apply(model, batch["x"], key)
        value = self.loss(pred, batch["y"])
        return value, {}

    def eval_fn(self, model: eqx.Module, batch: Any, key: jax.Array) -> dict[str, jax.Array]:
        pred = _apply(model, batch["x"], key)
        out = {"loss": self.loss(pred, batch["y"])}
        accuracy = resolve_accuracy(self.classification)
        if accuracy is not None:
            out["accuracy"] = accuracy(pred, batch["y"])
        return out


def _apply(model: Any, x: jax.Array, key: jax.Array) -> jax.Array:
    """Vmap ``model`` over the batch; pass a per-example key if it takes ``key=``."""
    keys = jax.random.split(key, x.shape[0])
    try:
        return jax.vmap(lambda xi, ki: model(xi, key=ki))(x, keys)
    except TypeError:
        return jax.vmap(model)(x)
