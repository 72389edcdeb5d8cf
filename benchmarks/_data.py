"""The digits data and the training constants every benchmark shares.

NumPy and scikit-learn only: the plain Lightning and Keras scripts of the whole-run suite
import it, and must not pay for JAX, Equinox or pipekit-train, which they do not use.
"""

from __future__ import annotations

from typing import Any

import numpy as np

BATCH = 128
LR = 1e-3
OPTIMIZER_CONFIG: dict[str, Any] = {"name": "adamw", "lr": LR}


def digits() -> dict[str, np.ndarray]:
    """All of sklearn's digits: ``{"x": float32 [1797, 64] in [0, 1], "y": int32 [1797]}``."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return {"x": (d.data / 16.0).astype(np.float32), "y": d.target.astype(np.int32)}
