"""The Lightning backend's case for the contract kit (``pipekit_train.testing``).

A dropout MLP (so the checks see the RNG stream as well as the data order) on 96
generated rows, 16 steps on the CPU; every object field an import string, so the kit can
run it through ``pipekit-train run``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from _lightning_helpers import data
from contract_cases import case, supervised_loop

from pipekit_train import TrainingLoop

CASE = case(
    "lightning",
    __name__,
    bad_options={"accelerator": 7, "precision": "13-true"},
    op_load_kwargs=f"{__name__}:load_kwargs",
)


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Dropout(0.2), torch.nn.Linear(16, 3)
    )


def make_data() -> dict[str, np.ndarray]:
    return data()


def op_inputs() -> np.ndarray:
    return data(5, seed=3)["x"]


def load_kwargs() -> dict[str, Any]:
    """What a user passes to ``TorchModelOp.load``: their own module's structure."""
    return {"like": make_model}


def make_loop() -> TrainingLoop:
    return supervised_loop("lightning", __name__, backend_options={"accelerator": "cpu"})
