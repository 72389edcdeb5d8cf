"""Mistakes with the training features are ``PipekitError``s naming the field, before compiling.

- ``accumulate_steps * batch_size`` larger than the dataset: ``DataError`` naming
  ``accumulate_steps`` and both numbers;
- a ``(state, model)`` pair in the wrong order: ``ConfigError`` on ``model_op``
  naming the accepted forms;
- a stateful task whose ``loss_fn`` returns no new state: ``ConfigError`` on
  ``task`` with the stateful signature.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import pytest
from _eqx_helpers import IN, OUT, make_data, run_loop, tiny_loop

from pipekit_train.errors import ConfigError, DataError


class BNNet(eqx.Module):
    lin: eqx.nn.Linear
    bn: eqx.nn.BatchNorm

    def __init__(self, key):
        self.lin = eqx.nn.Linear(IN, OUT, key=key)
        self.bn = eqx.nn.BatchNorm(OUT, axis_name="batch", mode="ema")

    def __call__(self, x, state):
        return self.bn(self.lin(x), state)


def _pair():
    return eqx.nn.make_with_state(BNNet)(jax.random.PRNGKey(0))


def test_accumulated_batch_larger_than_the_dataset_is_a_data_error():
    with pytest.raises(DataError, match=r"accumulate_steps \(8\) x batch_size \(16\) = 128"):
        run_loop(tiny_loop(dataset=make_data(96), accumulate_steps=8))


def test_pair_in_the_wrong_order_names_model_op():
    model, state = _pair()
    with pytest.raises(ConfigError, match="make_with_state") as err:
        run_loop(tiny_loop(model_op=(state, model)))
    assert err.value.field == "model_op"


def test_stateful_task_returning_no_state_names_task():
    class NoState:
        def loss_fn(self, model, state, batch, key):
            pred, _ = jax.vmap(model, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
                batch["x"], state
            )
            return jnp.mean(pred**2), {}

    with pytest.raises(ConfigError, match=r"\(loss, \(metrics, new_state\)\)") as err:
        run_loop(tiny_loop(model_op=_pair(), loss=None, task=NoState()))
    assert err.value.field == "task"
