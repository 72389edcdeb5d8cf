"""The Keras backend's case for the contract kit (``pipekit_train.testing``).

A dropout MLP (so the checks see the RNG stream as well as the data order) on 96 digits
images, 16 steps, on Keras's JAX backend; every object field an import string, so the kit
can run it through ``pipekit-train run``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from _keras_helpers import digits, mlp
from contract_cases import case, supervised_loop

from pipekit_train import TrainingLoop

CASE = case(
    "keras",
    __name__,
    bad_options={"steps_per_execution": 0, "data_parallel": "sometimes"},
    env={"KERAS_BACKEND": "jax"},
)


def make_model() -> Any:
    return mlp(hidden=16, dropout=0.2)


def make_data() -> dict[str, np.ndarray]:
    return digits(96)


def op_inputs() -> np.ndarray:
    return digits(5, offset=200)["x"]


def make_loop() -> TrainingLoop:
    return supervised_loop("keras", __name__)
