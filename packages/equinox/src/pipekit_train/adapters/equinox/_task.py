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

    **Stateful models** (``eqx.nn.make_with_state``, e.g. with ``eqx.nn.BatchNorm``)
    take and return the ``eqx.nn.State``::

        loss_fn(model, state, batch, key) -> (loss, (metrics, new_state))
        eval_fn(model, state, batch, key) -> metrics          # optional

    The backend carries ``new_state`` to the next step (it is part of the
    checkpoint); ``eval_fn`` gets the model in inference mode and the trained
    state. Vmap a batch-norm model with ``axis_name="batch"`` (Equinox's
    convention): ``jax.vmap(model, axis_name="batch", in_axes=(0, None),
    out_axes=(0, None))(x, state)``.
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


class StatefulSupervisedTask(eqx.Module):
    """The task synthesised from a loss for a stateful model (``(model, state)``).

    The model is vmapped over ``batch["x"]`` with ``axis_name="batch"``, so
    ``eqx.nn.BatchNorm`` normalises over the batch — the global batch under data
    parallelism, since the vmapped axis is the whole global batch — and the new
    state (running statistics) is carried. Evaluation runs the inference-mode model
    with the trained state and does not update it.
    """

    loss: Callable[[jax.Array, jax.Array], jax.Array] = eqx.field(static=True)
    classification: str | None = eqx.field(static=True, default=None)

    def loss_fn(
        self, model: eqx.Module, state: Any, batch: Any, key: jax.Array
    ) -> tuple[jax.Array, tuple[dict[str, jax.Array], Any]]:
        pred, new_state = apply_stateful(model, state, batch["x"], key)
        return self.loss(pred, batch["y"]), ({}, new_state)

    def eval_fn(
        self, model: eqx.Module, state: Any, batch: Any, key: jax.Array
    ) -> dict[str, jax.Array]:
        pred, _ = apply_stateful(model, state, batch["x"], key)
        out = {"loss": self.loss(pred, batch["y"])}
        accuracy = resolve_accuracy(self.classification)
        if accuracy is not None:
            out["accuracy"] = accuracy(pred, batch["y"])
        return out


def apply_stateful(model: Any, state: Any, x: jax.Array, key: jax.Array) -> tuple[Any, Any]:
    """``vmap(model, axis_name="batch")(x, state)`` → ``(predictions, new_state)``.

    Passes a per-example key when the model's signature takes ``key=``.
    """
    if takes_key(model):
        keys = jax.random.split(key, x.shape[0])
        return jax.vmap(
            lambda xi, ki, s: model(xi, s, key=ki),
            axis_name="batch",
            in_axes=(0, 0, None),
            out_axes=(0, None),
        )(x, keys, state)
    return jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(x, state)


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
