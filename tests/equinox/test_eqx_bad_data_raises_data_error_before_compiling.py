"""A malformed dataset is a DataError naming the field, raised before any compilation."""

from __future__ import annotations

import numpy as np
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop, watch_compilation

from pipekit_train import DataError

DATA = make_data(40)


class Records:
    """An indexable dataset of ``(x, y)`` records."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i: int):
        return DATA["x"][i], DATA["y"][i]


def _run_expecting(monkeypatch, error, **overrides):
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(error) as info:
            run_loop(tiny_loop(**overrides))
    assert not watch.anything, "the error came after the training step was compiled"
    return str(info.value)


def test_batch_size_larger_than_the_dataset(monkeypatch):
    msg = _run_expecting(monkeypatch, DataError, dataset=DATA, batch_size=64)
    assert "batch_size (64)" in msg and "40 rows" in msg
    assert "TrainingLoop.dataset" in msg and "batch_size <= 40" in msg


def test_batch_size_larger_than_an_indexable_dataset(monkeypatch):
    msg = _run_expecting(monkeypatch, DataError, dataset=Records(10), batch_size=16)
    assert "batch_size (16)" in msg and "10 rows" in msg


@pytest.mark.parametrize(
    "dataset",
    [
        {"x": np.zeros((0, 4), np.float32), "y": np.zeros((0,), np.int32)},
        (np.zeros((0, 4), np.float32), np.zeros((0,), np.int32)),
        Records(0),
        [],
    ],
    ids=["dict", "tuple", "indexable", "empty-list"],
)
def test_empty_dataset(monkeypatch, dataset):
    msg = _run_expecting(monkeypatch, DataError, dataset=dataset)
    assert "TrainingLoop.dataset" in msg and "empty" in msg


@pytest.mark.parametrize("form", ["dict", "tuple"])
def test_x_and_y_of_different_lengths(monkeypatch, form):
    x, y = DATA["x"], DATA["y"][:30]
    dataset = {"x": x, "y": y} if form == "dict" else (x, y)
    msg = _run_expecting(monkeypatch, DataError, dataset=dataset)
    assert "TrainingLoop.dataset" in msg
    assert "40 rows" in msg and "30" in msg and "same length" in msg


def test_ragged_val_dataset(monkeypatch):
    msg = _run_expecting(monkeypatch, DataError, val_dataset={"x": DATA["x"], "y": DATA["y"][:5]})
    assert "TrainingLoop.val_dataset" in msg and "same length" in msg


def test_empty_val_dataset(monkeypatch):
    msg = _run_expecting(
        monkeypatch,
        DataError,
        val_dataset={"x": np.zeros((0, 4), np.float32), "y": np.zeros((0,), np.int32)},
    )
    assert "TrainingLoop.val_dataset" in msg and "empty" in msg


def test_dict_without_x(monkeypatch):
    msg = _run_expecting(monkeypatch, DataError, dataset={"inputs": DATA["x"], "y": DATA["y"]})
    assert "TrainingLoop.dataset" in msg and "'x'" in msg


def test_not_a_dataset_at_all(monkeypatch):
    msg = _run_expecting(monkeypatch, DataError, dataset=42)
    assert "TrainingLoop.dataset" in msg and "int" in msg


def test_val_dataset_whose_features_do_not_fit_the_model(monkeypatch):
    """Caught before training starts, not as a JAX shape error at the first evaluation."""
    bad_val = {"x": np.zeros((8, 5), np.float32), "y": np.zeros((8,), np.int32)}
    msg = _run_expecting(monkeypatch, DataError, val_dataset=bad_val)
    assert "TrainingLoop.val_dataset" in msg
    assert "'x': float32[5]" in msg and "'x': float32[4]" in msg  # theirs and the expected
