"""Within an epoch no row repeats and exactly n // B * B rows are seen (remainder dropped)."""

from __future__ import annotations

import numpy as np
import pytest
from _data_helpers import toy_data

from pipekit_train.engine import BatchIterator, BatchSource


@pytest.mark.parametrize("n,b", [(103, 10), (100, 10), (7, 7), (64, 1)])
def test_epochs_cover_without_repeats(n, b):
    src = BatchSource(toy_data(n), b, seed=11)
    it = BatchIterator(src)
    spe = n // b
    assert src.steps_per_epoch == spe
    epochs = []
    for _ in range(3):
        rows = np.concatenate([it.next_batch()["y"] for _ in range(spe)])
        assert len(rows) == spe * b
        assert len(np.unique(rows)) == len(rows)
        epochs.append(rows)
    if n > b and n % b == 0:
        for rows in epochs:
            assert set(rows.tolist()) == set(range(n))


def test_len_is_a_large_virtual_length_independent_of_max_steps():
    src = BatchSource(toy_data(103), 10, seed=0)
    assert len(src) == 10 * 10**6
    last = src[len(src) - 1]
    assert last["y"].shape == (10,)
    with pytest.raises(IndexError):
        src[len(src)]
