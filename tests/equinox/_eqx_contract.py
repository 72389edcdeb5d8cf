"""The Equinox backend's case for the contract kit (``pipekit_train.testing``).

A dropout MLP (so the checks see the RNG stream as well as the data order) on the 96-row
synthetic problem of ``_eqx_helpers``, 16 steps; every object field an import string so the
kit can run it through ``pipekit-train run`` in fresh processes.
"""

from __future__ import annotations

from typing import Any

import equinox as eqx
import jax
import numpy as np
from _eqx_helpers import IN, OUT
from _eqx_helpers import make_data as _make_data
from contract_cases import case, supervised_loop

from pipekit_train import TrainingLoop
from pipekit_train.adapters.equinox import JaxModelOp

CASE = case(
    "equinox",
    __name__,
    bad_options={"steps_per_call": 0, "resume": "sometimes"},
    op_load_kwargs=f"{__name__}:load_kwargs",
)


class DropoutMLP(eqx.Module):
    """Two linear layers with dropout between them."""

    layers: list
    dropout: eqx.nn.Dropout

    def __init__(self, key: jax.Array) -> None:
        k1, k2 = jax.random.split(key)
        self.layers = [eqx.nn.Linear(IN, 16, key=k1), eqx.nn.Linear(16, OUT, key=k2)]
        self.dropout = eqx.nn.Dropout(0.2)

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        h = jax.nn.relu(self.layers[0](x))
        return self.layers[1](self.dropout(h, key=key, inference=key is None))


def make_module() -> DropoutMLP:
    return DropoutMLP(jax.random.PRNGKey(0))


def make_model() -> JaxModelOp:
    return JaxModelOp(make_module(), factory="_eqx_contract:make_module")


def load_kwargs() -> dict[str, Any]:
    """What a user passes to ``JaxModelOp.load``: their own code for the structure."""
    return {"factory": make_module}


def make_data() -> dict[str, np.ndarray]:
    return _make_data()


def op_inputs() -> np.ndarray:
    return _make_data(5, seed=3)["x"]


def make_loop() -> TrainingLoop:
    return supervised_loop("equinox", __name__, backend_options={"steps_per_call": 2})
