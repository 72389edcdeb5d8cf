"""A model_op, loss or task the Equinox backend cannot train is a ConfigError before compiling."""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from _eqx_helpers import make_module, make_regression, run_loop, tiny_loop, watch_compilation

from pipekit_train import ConfigError


class TorchLikeModule:
    """Looks like a torch.nn.Module: callable, parameters(), but not an Equinox module."""

    def __init__(self) -> None:
        self.module = "not an equinox module"

    def parameters(self):
        return iter(())

    def __call__(self, x):
        return x

    def forward(self, x):
        return x


def _raises(monkeypatch, **overrides) -> ConfigError:
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(ConfigError) as info:
            run_loop(tiny_loop(**overrides))
    assert not watch.anything, "the error came after the training step was compiled"
    return info.value


@pytest.mark.parametrize(
    "model_op",
    [lambda x: x, {"linear": jnp.ones((4, 3))}, TorchLikeModule(), jnp.ones((4, 3)), None],
    ids=["lambda", "dict", "torch-like", "array", "none"],
)
def test_model_op_that_is_not_an_equinox_module(monkeypatch, model_op):
    err = _raises(monkeypatch, model_op=model_op)
    assert err.field == "model_op"
    msg = str(err)
    assert "TrainingLoop.model_op" in msg
    assert "equinox.Module" in msg and "JaxModelOp" in msg
    assert type(model_op).__name__ in msg


def test_loss_that_returns_a_non_scalar(monkeypatch):
    err = _raises(
        monkeypatch,
        model_op=make_module(out_size=1),
        dataset=make_regression(),
        loss=lambda pred, y: (pred - y) ** 2,
    )
    assert err.field == "loss"
    msg = str(err)
    assert "TrainingLoop.loss" in msg and "scalar" in msg
    assert "(16, 1)" in msg  # the shape it returned
    assert "mean" in msg  # how to fix it


def test_loss_that_fails_on_a_batch(monkeypatch):
    def broken(pred, y):
        return jnp.mean(pred @ jnp.ones((7, 7)))

    err = _raises(monkeypatch, loss=broken)
    assert err.field == "loss"
    assert "TrainingLoop.loss" in str(err) and "one training batch" in str(err)


def test_builtin_loss_with_mismatched_target_shape(monkeypatch):
    """mse on (16, 3) predictions against (16, 1) targets is caught, not broadcast."""
    err = _raises(
        monkeypatch, model_op=make_module(out_size=3), dataset=make_regression(), loss="mse"
    )
    assert err.field == "loss"
    assert "mse" in str(err) and "(16, 3)" in str(err) and "(16, 1)" in str(err)


class NoLossFn:
    def eval_fn(self, model, batch, key):
        return {}


class LossFnReturnsBareLoss(eqx.Module):
    def loss_fn(self, model, batch, key):
        return jnp.mean(jax.vmap(model)(batch["x"]))


class LossFnReturnsVector(eqx.Module):
    def loss_fn(self, model, batch, key):
        return jax.vmap(model)(batch["x"]).sum(-1), {}


@pytest.mark.parametrize(
    "task", [NoLossFn(), object(), "not a task"], ids=["eval-only", "object", "string"]
)
def test_task_without_loss_fn(monkeypatch, task):
    err = _raises(monkeypatch, task=task, loss=None)
    assert err.field == "task"
    msg = str(err)
    assert "TrainingLoop.task" in msg and "loss_fn(model, batch, key)" in msg


def test_task_whose_loss_fn_returns_no_metrics_dict(monkeypatch):
    err = _raises(monkeypatch, task=LossFnReturnsBareLoss(), loss=None)
    assert err.field == "task"
    assert "(loss, metrics_dict)" in str(err)


def test_task_whose_loss_is_not_scalar(monkeypatch):
    err = _raises(monkeypatch, task=LossFnReturnsVector(), loss=None)
    assert err.field == "task"
    assert "scalar" in str(err) and "(16,)" in str(err)
