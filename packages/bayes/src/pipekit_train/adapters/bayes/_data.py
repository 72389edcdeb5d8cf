"""The full dataset as host arrays, checked for what a posterior cannot absorb."""

from __future__ import annotations

from typing import Any

import numpy as np

from pipekit_train.engine import materialize
from pipekit_train.errors import DataError

__all__ = ["full_data", "model_data", "check_finite"]


def check_finite(arrays: dict[str, np.ndarray], field: str) -> None:
    """``DataError`` naming the field, the key and the first row holding NaN or inf."""
    for key, a in arrays.items():
        if a.dtype.kind not in "fc":
            continue
        bad = ~np.isfinite(a)
        if bad.any():
            row = int(np.argwhere(bad.reshape(a.shape[0], -1).any(axis=1))[0, 0])
            raise DataError(
                f"{field}['{key}'] holds NaN or inf (first at row {row}, "
                f"{int(bad.sum())} values); a likelihood over it is undefined — drop or "
                "impute those rows"
            )


def _arrays(dataset: Any, field: str) -> dict[str, np.ndarray]:
    """Core's normalisation and checks (forms, dtype, lengths, finiteness), read in full."""
    from pipekit_train.engine import refuse_stream

    # A backend that materialises the data cannot read a stream; the minibatch paths
    # (numpyro-svi, blackjax sgld / sghmc) take theirs before coming here.
    refuse_stream(dataset, field, "this backend (it materialises the data)")
    return dict(materialize(dataset, field))


def full_data(dataset: Any, field: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(x, y)`` of the whole dataset (``y`` may be absent), materialised once."""
    arrays = _arrays(dataset, field)
    return arrays["x"], arrays.get("y")


def model_data(
    dataset: Any, field: str
) -> tuple[np.ndarray, np.ndarray | None, dict[str, np.ndarray]]:
    """``(x, y, extras)``: the whole dataset, with every named array beyond ``x`` and ``y``
    in ``extras`` — the model receives each as the keyword of its name."""
    arrays = _arrays(dataset, field)
    extras = {k: v for k, v in arrays.items() if k not in ("x", "y")}
    return arrays["x"], arrays.get("y"), extras
