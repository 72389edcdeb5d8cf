"""An endless ``grain.MapDataset`` (``.repeat()``) trains by index, and is never read whole.

Issue 36, item 4: a user's ``ds.shuffle(seed).repeat()`` is read in its own order, batch
``i`` being Grain's own ``.batch(B)[i]`` of it. Read from start to end — as a
``val_dataset``, or by a backend that holds the whole dataset (``materialize``) — it
would never finish: a ``DataError`` naming the field and the fix, raised at once.
"""

from __future__ import annotations

import grain
import numpy as np
import pytest
from _data_helpers import toy_data

from pipekit_train.engine import BatchIterator, BatchSource, eval_batches, materialize
from pipekit_train.errors import DataError


def _endless() -> grain.MapDataset:
    data = toy_data(20)
    records = [{"x": data["x"][i], "y": data["y"][i]} for i in range(20)]
    return grain.MapDataset.source(records).shuffle(seed=3).repeat()


def test_training_reads_it_by_index_in_its_own_order():
    want = _endless().batch(8)
    it = BatchIterator(BatchSource(_endless(), 8, seed=0))
    for i in range(7):  # 56 records: almost three passes, none dropped
        got = it.next_batch()
        np.testing.assert_array_equal(got["x"], want[i]["x"])
        np.testing.assert_array_equal(got["y"], want[i]["y"])


@pytest.mark.parametrize("read", ["val", "whole"])
def test_reading_it_whole_is_a_data_error(read):
    with pytest.raises(DataError, match=r"val_dataset is an endless.*before \.repeat"):
        if read == "val":
            next(eval_batches(_endless(), 4))
        else:
            materialize(_endless(), "TrainingLoop.val_dataset")
