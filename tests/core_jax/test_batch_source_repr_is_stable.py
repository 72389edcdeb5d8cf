"""repr(BatchSource) is stable (Grain's set_state compares it) and the source pickles."""

from __future__ import annotations

import pickle

from _data_helpers import assert_batches_equal, toy_data

from pipekit_train.engine import BatchSource


def test_repr_equal_across_constructions_and_free_of_addresses():
    a, b = BatchSource(toy_data(40), 8, seed=1), BatchSource(toy_data(40), 8, seed=1)
    assert repr(a) == repr(b)
    assert "0x" not in repr(a)
    assert repr(a) != repr(BatchSource(toy_data(40), 8, seed=2))
    assert repr(a) != repr(BatchSource(toy_data(41), 8, seed=1))


def test_pickle_roundtrip_keeps_repr_and_batches():
    src = BatchSource(toy_data(40), 8, seed=1)
    src[3]  # fill the permutation cache
    clone = pickle.loads(pickle.dumps(src))
    assert repr(clone) == repr(src)
    for i in (0, 3, 7, 12):
        assert_batches_equal(clone[i], src[i])
