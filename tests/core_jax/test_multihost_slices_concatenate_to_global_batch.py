"""Process p reads the p-th contiguous slice of each global batch: order is process-count free."""

from __future__ import annotations

import numpy as np
import pytest
from _data_helpers import toy_data

from pipekit_train.engine import BatchIterator, BatchSource


@pytest.mark.parametrize("processes", [2, 4])
def test_local_batches_concatenate_to_the_single_process_batch(processes):
    data = toy_data(103)
    single = BatchSource(data, 12, seed=4)
    locals_ = [
        BatchSource(data, 12, seed=4, process_index=p, process_count=processes)
        for p in range(processes)
    ]
    assert {repr(s) for s in locals_} == {repr(single)}  # iterator states are interchangeable
    for i in range(25):
        parts = [s[i] for s in locals_]
        assert all(part["x"].shape == (12 // processes, 3) for part in parts)
        for key in ("x", "y"):
            np.testing.assert_array_equal(np.concatenate([p[key] for p in parts]), single[i][key])


def test_chunks_are_sliced_the_same_way():
    data = toy_data(103)
    single = BatchIterator(BatchSource(data, 12, seed=4)).next_chunk(5)
    parts = [
        BatchIterator(BatchSource(data, 12, seed=4, process_index=p, process_count=3)).next_chunk(5)
        for p in range(3)
    ]
    assert parts[0]["x"].shape == (5, 4, 3)
    np.testing.assert_array_equal(np.concatenate([p["y"] for p in parts], axis=1), single["y"])
