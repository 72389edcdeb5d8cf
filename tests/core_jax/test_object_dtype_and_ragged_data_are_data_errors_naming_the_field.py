"""The engine's normalisation refuses object-dtype, string and ragged columns by field and key.

Before, a dict of such columns passed ``normalize_dataset`` and failed later inside
optree, JAX or torch (a raw ``TypeError`` / ``ValueError``).
"""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train.engine import eval_batches, materialize, normalize_dataset
from pipekit_train.errors import DataError


def _column_of_arrays(shapes: list[tuple[int, ...]]) -> np.ndarray:
    column = np.empty(len(shapes), dtype=object)
    column[:] = [np.zeros(s, np.float32) for s in shapes]
    return column


@pytest.mark.parametrize(
    ("dataset", "needle"),
    [
        ({"x": _column_of_arrays([(3,)] * 4), "y": np.arange(4)}, "dtype object"),
        ({"x": _column_of_arrays([(3,), (2,), (3,), (3,)]), "y": np.arange(4)}, "ragged"),
        ({"x": [[1.0, 2.0], [3.0]], "y": [0, 1]}, "ragged"),
        ((np.zeros((4, 2)), np.array(["a", "b", "c", "d"])), "not numeric"),
    ],
    ids=["object-of-equal-arrays", "object-of-ragged-arrays", "ragged-lists", "string-labels"],
)
def test_dict_and_tuple_forms(dataset, needle) -> None:
    with pytest.raises(DataError, match=needle) as err:
        normalize_dataset(dataset, "TrainingLoop.val_dataset")
    assert "TrainingLoop.val_dataset[" in str(err.value)


class ObjectRecords:
    """Records whose 'x' is a Python object, not an array."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i: int):
        return {"x": {"pixels": [i]}, "y": i}


def test_records_are_checked_when_gathered() -> None:
    source = normalize_dataset(ObjectRecords(), "TrainingLoop.dataset")
    with pytest.raises(DataError, match=r"TrainingLoop.dataset\['x'\].*object"):
        materialize(source, "TrainingLoop.dataset")
    with pytest.raises(DataError, match=r"TrainingLoop.dataset\['x'\]"):
        next(eval_batches(ObjectRecords(), 2, field="TrainingLoop.dataset"))
