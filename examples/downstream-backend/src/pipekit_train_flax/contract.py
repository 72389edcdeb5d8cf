"""A small flax-nnx run every field of which is an import string (YAML-expressible).

What a backend contract test kit needs from this backend: :func:`make_loop` (no
``checkpoint_dir``, no ``Checkpoint`` callback, no ``metric_writer``: the kit sets those),
and :func:`op_inputs`, a batch for the trained op. :func:`make_model` is a tiny MLP with
``nnx.Dropout``, so the run's randomness reaches the model; :func:`make_data` a synthetic
3-class problem whose labels are a fixed linear function of the inputs.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from flax import nnx

from pipekit_train import TrainingLoop

__all__ = ["MLP", "make_model", "make_data", "make_loop", "op_inputs"]

IN_FEATURES = 4
CLASSES = 3
ROWS = 96


class MLP(nnx.Module):
    """``Linear(4, hidden) → relu → Dropout → Linear(hidden, 3)`` (logits)."""

    def __init__(self, hidden: int, dropout: float, rngs: nnx.Rngs) -> None:
        self.hidden = nnx.Linear(IN_FEATURES, hidden, rngs=rngs)
        self.dropout = nnx.Dropout(dropout, rngs=rngs)
        self.out = nnx.Linear(hidden, CLASSES, rngs=rngs)

    def __call__(self, x: Any) -> Any:
        return self.out(self.dropout(nnx.relu(self.hidden(x))))


def make_model(hidden: int = 16, dropout: float = 0.1, seed: int = 0) -> MLP:
    """The tiny MLP, its weights and dropout stream seeded by ``seed``."""
    return MLP(hidden, dropout, nnx.Rngs(seed))


def make_data(rows: int = ROWS, seed: int = 0) -> dict[str, np.ndarray]:
    """``{"x": float32 [rows, 4], "y": int32 [rows]}``: ``y = argmax(x @ W)`` for a fixed ``W``."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, IN_FEATURES)).astype(np.float32)
    w = np.random.default_rng(1234).normal(size=(IN_FEATURES, CLASSES)).astype(np.float32)
    y = np.argmax(x @ w, axis=1).astype(np.int32)
    return {"x": x, "y": y}


def make_loop() -> TrainingLoop:
    """16 steps of the MLP on the synthetic data (batch 16, adam, logging every 2 steps)."""
    return TrainingLoop(
        model_op="pipekit_train_flax.contract:make_model",
        dataset="pipekit_train_flax.contract:make_data",
        loss="cross_entropy",
        batch_size=16,
        max_steps=16,
        optimizer_config={"name": "adam", "lr": 0.01},
        log_every_n_steps=2,
        seed=0,
        backend="flax-nnx",
    )


def op_inputs() -> np.ndarray:
    """A float32 ``[5, 4]`` batch for the trained op."""
    return np.random.default_rng(7).normal(size=(5, IN_FEATURES)).astype(np.float32)
