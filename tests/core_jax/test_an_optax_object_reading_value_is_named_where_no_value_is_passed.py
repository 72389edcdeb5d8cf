"""An optax object that reads the loss as ``value`` is checked for what the backend passes.

optax's ``contrib.reduce_on_plateau`` example calls ``update(..., value=loss)`` (issue 36,
item 8). A backend whose step passes the loss (``passes_value=True``: Equinox, through
``optimizer_update``) accepts it and derives its resume identity; one whose update is
``update(grads, state, params)`` (numpyro-svi, through numpyro's optax wrapper) refuses it
before compiling with a ``ConfigError`` naming ``optimizer_config``, the reason and the way
that works. A plain optimiser is accepted either way.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import optax
import pytest
from optax import contrib

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError
from pipekit_train.jax import own_optimizer

PARAMS = {"w": jnp.ones((3, 2)), "b": jnp.zeros(2)}


def inspect_own_optimizer(tx, params, *, optimizer_id, passes_value=False):
    loop = TrainingLoop(
        model_op=object(),
        dataset={"x": np.zeros((4, 3), np.float32), "y": np.zeros(4, np.int32)},
        loss="cross_entropy",
        batch_size=2,
        max_steps=1,
        optimizer_config=tx,
    )
    extra = {"passes_value": True} if passes_value else {}  # the default: no value passed
    own = own_optimizer(loop, params, optimizer_id=optimizer_id, **extra)
    assert own is not None
    return own


def _plateau() -> optax.GradientTransformation:
    return optax.chain(optax.adam(1e-2), contrib.reduce_on_plateau(patience=2))


def test_a_backend_that_passes_value_accepts_and_identifies_it():
    own = inspect_own_optimizer(_plateau(), PARAMS, optimizer_id=None, passes_value=True)
    assert own.identity["probe"] is not None


def test_a_backend_that_passes_none_names_the_reason_and_the_way():
    with pytest.raises(ConfigError, match=r"reads the loss as the extra argument `value`") as e:
        inspect_own_optimizer(_plateau(), PARAMS, optimizer_id=None)
    assert e.value.field == "optimizer_config"
    assert "equinox backend" in str(e.value) and "update(grads, state, params)" in str(e.value)


def test_a_plain_optimizer_has_the_same_identity_either_way():
    a = inspect_own_optimizer(optax.adam(1e-2), PARAMS, optimizer_id=None)
    b = inspect_own_optimizer(optax.adam(1e-2), PARAMS, optimizer_id=None, passes_value=True)
    assert a.identity == b.identity and a.identity["probe"] is not None
