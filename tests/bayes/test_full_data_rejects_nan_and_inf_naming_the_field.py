"""NaN or inf in the data is a ``DataError`` naming the dataset field, key and row."""

import numpy as np
import pytest

from pipekit_train.adapters.bayes import full_data
from pipekit_train.errors import DataError, PipekitError


def test_nan_in_x_and_inf_in_y() -> None:
    x = np.ones((5, 2))
    y = np.zeros(5)
    x[3, 1] = np.nan
    with pytest.raises(DataError, match=r"TrainingLoop.dataset\['x'\].*row 3") as err:
        full_data({"x": x, "y": y}, "TrainingLoop.dataset")
    assert isinstance(err.value, PipekitError)
    y[1] = np.inf
    with pytest.raises(DataError, match=r"TrainingLoop.val_dataset\['y'\].*row 1"):
        full_data((np.ones((5, 2)), y), "TrainingLoop.val_dataset")


def test_every_form_gives_the_same_arrays() -> None:
    x, y = np.arange(10.0).reshape(5, 2), np.arange(5.0)
    a = full_data({"x": x, "y": y}, "d")
    b = full_data((x, y), "d")
    c = full_data([{"x": x[i], "y": y[i]} for i in range(5)], "d")
    for got in (b, c):
        np.testing.assert_array_equal(got[0], a[0])
        np.testing.assert_array_equal(got[1], a[1])
