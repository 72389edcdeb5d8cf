"""next_chunk(k) is k consecutive batches stacked on a new leading axis, on both engines."""

from __future__ import annotations

import numpy as np
from _data_helpers import toy_data

from pipekit_train.engine import BatchIterator, BatchSource


def test_chunk_equals_consecutive_batches():
    src = BatchSource(toy_data(103), 10, seed=2)
    it = BatchIterator(src)
    it.next_batch()
    chunk = it.next_chunk(15)  # crosses an epoch boundary
    assert chunk["x"].shape == (15, 10, 3) and chunk["y"].shape == (15, 10)
    for j in range(15):
        np.testing.assert_array_equal(chunk["x"][j], src[1 + j]["x"])
        np.testing.assert_array_equal(chunk["y"][j], src[1 + j]["y"])
    np.testing.assert_array_equal(it.next_batch()["y"], src[16]["y"])
