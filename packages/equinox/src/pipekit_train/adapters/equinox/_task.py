"""The ``TrainTask`` protocol and the task synthesised from ``TrainingLoop.loss``."""

from __future__ import annotations

import inspect
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


def takes_key(model: Any) -> bool:
    """Whether ``model(x, key=...)`` is a valid call, read from its signature.

    True when ``__call__`` (an ``eqx.Module``'s method or any callable) has a
    ``key`` parameter that can be passed by keyword, or takes ``**kwargs``. A
    callable whose signature cannot be read gets no key.
    """
    try:
        params = inspect.signature(model).parameters.values()
    except (TypeError, ValueError):
        return False
    for p in params:
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            return True
        if p.name == "key" and p.kind in (
            inspect.Parameter.KEYWORD_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            return True
    return False


def _apply(model: Any, x: jax.Array, key: jax.Array) -> jax.Array:
    """Vmap ``model`` over the batch, with a per-example key if its signature takes ``key=``.

    Decided from the signature, not by catching ``TypeError``: a model that raises
    ``TypeError`` for its own reasons must show that error, not a second one from
    a retry without ``key``.
    """
    if takes_key(model):
        keys = jax.random.split(key, x.shape[0])
        return jax.vmap(lambda xi, ki: model(xi, key=ki))(x, keys)
    return jax.vmap(model)(x)
