"""A stateful model (``eqx.nn.make_with_state``) trains in each accepted form, with a user task.

Forms: a ``(model, state)`` pair and a ``JaxModelOp(model, state=state)``; both
give the same bits, and the trained op carries the updated ``eqx.nn.State``.
``steps_per_call`` fuses steps of a stateful model without changing the result
(checked at float tolerance: conv-free, but the scan may reorder). A user
``TrainTask`` takes and returns the state:
``loss_fn(model, state, batch, key) -> (loss, (metrics, new_state))``. Mistakes
fail before compiling with a ``ConfigError`` naming the field: a batch-norm model
without its state, and a task with the stateless signature.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _eqx_helpers import IN, OUT, leaves, make_data, run_loop, tiny_loop

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.errors import ConfigError


class BNNet(eqx.Module):
    lin1: eqx.nn.Linear
    bn: eqx.nn.BatchNorm
    lin2: eqx.nn.Linear

    def __init__(self, key):
        k1, k2 = jax.random.split(key)
        self.lin1 = eqx.nn.Linear(IN, 8, key=k1)
        self.bn = eqx.nn.BatchNorm(8, axis_name="batch", mode="ema")
        self.lin2 = eqx.nn.Linear(8, OUT, key=k2)

    def __call__(self, x, state):
        h, state = self.bn(self.lin1(x), state)
        return self.lin2(jax.nn.relu(h)), state


def _pair():
    return eqx.nn.make_with_state(BNNet)(jax.random.PRNGKey(0))


class StatefulTask:
    """A hand-written task for a stateful model (mean squared error on one-hot targets)."""

    def loss_fn(self, model, state, batch, key):
        pred, state = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
            batch["x"], state
        )
        target = jax.nn.one_hot(batch["y"], OUT)
        loss = jnp.mean((pred - target) ** 2)
        return loss, ({"pred_mean": jnp.mean(pred)}, state)


def _state_leaves(op):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(op.state)]


def test_pair_and_op_forms_train_to_the_same_bits_and_carry_the_state():
    model, state = _pair()
    from_pair, info = run_loop(tiny_loop(model_op=(model, state)))
    from_op, _ = run_loop(tiny_loop(model_op=JaxModelOp(model, state=state)))
    assert info["features"]["stateful_model"] is True
    for a, b in zip(
        leaves(from_pair) + _state_leaves(from_pair),
        leaves(from_op) + _state_leaves(from_op),
        strict=True,
    ):
        assert a.tobytes() == b.tobytes()
    before = [np.asarray(x) for x in jax.tree_util.tree_leaves(state)]
    assert any(
        not np.array_equal(a, b) for a, b in zip(before, _state_leaves(from_pair), strict=True)
    )
    assert np.asarray(from_pair(make_data(5, seed=2)["x"])).shape == (5, OUT)


def test_steps_per_call_fuses_a_stateful_model():
    one, _ = run_loop(tiny_loop(model_op=_pair(), backend_options={"steps_per_call": 1}))
    fused, _ = run_loop(tiny_loop(model_op=_pair(), backend_options={"steps_per_call": 5}))
    for a, b in zip(
        leaves(one) + _state_leaves(one), leaves(fused) + _state_leaves(fused), strict=True
    ):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_user_task_takes_and_returns_the_state():
    op, info = run_loop(
        tiny_loop(
            model_op=_pair(), loss=None, task=StatefulTask(), val_dataset=make_data(16, seed=3)
        )
    )
    assert "pred_mean" in info["final_metrics"] and "val_loss" in info["final_metrics"]
    assert op.state is not None


def test_batchnorm_model_without_state_is_a_config_error_naming_model_op():
    model, _ = _pair()
    with pytest.raises(ConfigError, match="make_with_state") as err:
        run_loop(tiny_loop(model_op=model))
    assert err.value.field == "model_op"


def test_stateless_task_signature_for_a_stateful_model_names_task():
    class Stateless:
        def loss_fn(self, model, batch, key):
            return jnp.zeros(()), {}

    with pytest.raises(ConfigError, match="loss_fn\\(model, state, batch, key\\)") as err:
        run_loop(tiny_loop(model_op=_pair(), loss=None, task=Stateless()))
    assert err.value.field == "task"


def test_public_train_step_threads_the_state():
    from pipekit_train.adapters.equinox import TrainState, train_step
    from pipekit_train.adapters.equinox._task import StatefulSupervisedTask

    model, state = _pair()
    optimizer = optax.adam(1e-2)
    ts = TrainState.create(model, optimizer, state)
    task = StatefulSupervisedTask(
        loss=lambda p, y: optax.softmax_cross_entropy_with_integer_labels(p, y).mean()
    )
    batch = {k: jnp.asarray(v) for k, v in make_data(16).items()}
    new, metrics = train_step(ts, batch, jax.random.PRNGKey(0), task, optimizer)
    assert int(new.step) == 1 and np.isfinite(float(metrics["loss"]))
    assert jax.tree_util.tree_structure(new.model_state) == jax.tree_util.tree_structure(state)
