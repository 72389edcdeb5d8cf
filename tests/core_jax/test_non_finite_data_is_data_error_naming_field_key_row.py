"""NaN or inf in a numeric `dataset` / `val_dataset` array is a DataError at normalisation,
naming the field, the key and the first bad row; integer arrays and finite data pass."""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train import DataError
from pipekit_train.engine import normalize_dataset


def _data(n: int = 20) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {"x": rng.standard_normal((n, 3)).astype(np.float32), "y": np.arange(n) % 2}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
def test_non_finite_x_names_field_key_and_first_row(bad: float) -> None:
    data = _data()
    data["x"][7, 2] = bad
    data["x"][12, 0] = bad
    with pytest.raises(DataError) as info:
        normalize_dataset(data, "TrainingLoop.dataset")
    msg = str(info.value)
    assert "TrainingLoop.dataset['x']" in msg
    assert "first at row 7" in msg and "2 bad row(s)" in msg


def test_tuple_form_and_val_dataset_target() -> None:
    x, y = _data()["x"], np.linspace(0, 1, 20).astype(np.float64)
    y[19] = np.nan
    with pytest.raises(DataError, match=r"TrainingLoop\.val_dataset\['y'\].*row 19"):
        normalize_dataset((x, y), "TrainingLoop.val_dataset")


def test_finite_and_integer_data_pass_unchanged() -> None:
    data = _data()
    out = normalize_dataset(data, "TrainingLoop.dataset")
    assert out["x"] is data["x"]  # no copy made by the check
    np.testing.assert_array_equal(out["y"], data["y"])
