"""Every malformed dataset or batch size is a DataError / ConfigError naming the field."""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train.engine import BatchSource, normalize_dataset
from pipekit_train.errors import ConfigError, DataError

F = "TrainingLoop.dataset"


class Ragged:
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"x": np.zeros(3), "y": 0} if i < 2 else {"x": np.zeros(3), "label": 0}


class Empty:
    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError(i)


@pytest.mark.parametrize(
    "dataset, match",
    [
        ({"x": np.zeros((0, 3)), "y": np.zeros(0)}, "empty"),
        (Empty(), "empty"),
        ({"x": np.zeros((100, 3)), "y": np.zeros(99)}, "x has 100 rows but y has 99"),
        ((np.zeros((100, 3)), np.zeros(99)), "x has 100 rows but y has 99"),
        ({"features": np.zeros((10, 3)), "y": np.zeros(10)}, "without an 'x' key"),
        ((np.zeros(3), np.zeros(3), np.zeros(3)), r"tuple dataset must be \(x, y\)"),
        (42, "expected a dict of equal-length arrays"),
        (np.zeros((10, 3)), "grain.MapDataset"),
        (Ragged(), "inconsistent structure"),
        ([{"x": 1, "y": 2}, 3], "record 1 is a int"),
    ],
)
def test_bad_forms(dataset, match):
    with pytest.raises(DataError, match=match) as info:
        normalize_dataset(dataset, F)
    assert F in str(info.value)


def test_inconsistent_record_in_the_middle_is_caught_when_batched():
    class Middle(Ragged):
        def __getitem__(self, i):
            return {"x": np.zeros(3), "z": 0} if i == 1 else {"x": np.zeros(3), "y": 0}

    src = BatchSource(Middle(), 4, seed=0, shuffle=False)
    with pytest.raises(DataError, match="inconsistent structure"):
        src[0]


def test_batch_size_larger_than_dataset_names_both():
    with pytest.raises(DataError, match=r"batch_size \(64\).*50 rows") as info:
        BatchSource({"x": np.zeros((50, 2)), "y": np.zeros(50)}, 64, seed=0)
    assert "TrainingLoop.dataset" in str(info.value)


def test_batch_size_not_divisible_by_processes_is_config_error():
    with pytest.raises(ConfigError, match="divisible") as info:
        BatchSource({"x": np.zeros((50, 2)), "y": np.zeros(50)}, 10, seed=0, process_count=3)
    assert info.value.field == "batch_size"


def test_val_dataset_field_name_is_used():
    with pytest.raises(DataError, match="TrainingLoop.val_dataset"):
        normalize_dataset({"y": np.zeros(3)}, "TrainingLoop.val_dataset")
