"""Small models and data shared by the keras tests (real Keras, real digits)."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402


def digits(n: int | None = None, offset: int = 0) -> dict[str, np.ndarray]:
    """``{"x": float32 [n, 64], "y": int32 [n]}`` from scikit-learn's digits."""
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int32)
    end = None if n is None else offset + n
    return {"x": x[offset:end], "y": y[offset:end]}


def mlp(hidden: int = 32, dropout: float = 0.0, seed: int = 0, inputs: int = 64) -> Any:
    """A Sequential 64 → hidden (relu) [→ dropout] → 10 logits, initialised from ``seed``."""
    keras.utils.set_random_seed(seed)
    layers: list[Any] = [keras.Input((inputs,)), keras.layers.Dense(hidden, activation="relu")]
    if dropout:
        layers.append(keras.layers.Dropout(dropout, seed=seed))
    layers.append(keras.layers.Dense(10))
    return keras.Sequential(layers)


def variables(model: Any) -> list[np.ndarray]:
    """Host copies of every model and optimiser variable."""
    out = [np.array(v.value) for v in model.variables]
    if getattr(model, "optimizer", None) is not None:
        out += [np.array(v.value) for v in model.optimizer.variables]
    return out
