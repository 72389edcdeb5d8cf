"""Small datasets and comparisons shared by the batch-source tests."""

from __future__ import annotations

import numpy as np


def toy_data(n: int = 103, features: int = 3) -> dict[str, np.ndarray]:
    """Rows whose ``y`` is their own index, so a batch says which rows it holds."""
    x = np.arange(n * features, dtype=np.float32).reshape(n, features)
    return {"x": x, "y": np.arange(n, dtype=np.int64)}


def assert_batches_equal(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=f"key {k!r}")
