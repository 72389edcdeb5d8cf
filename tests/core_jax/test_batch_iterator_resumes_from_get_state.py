"""get_state / set_state continue the exact batch sequence, across engines and epochs."""

from __future__ import annotations

import json

import pytest
from _data_helpers import assert_batches_equal, toy_data

from pipekit_train.engine import BatchIterator, BatchSource
from pipekit_train.errors import CheckpointError


def test_resume_reproduces_the_following_batches():
    src = BatchSource(toy_data(103), 10, seed=5)
    ref = BatchIterator(src)
    expected = [ref.next_batch() for _ in range(40)]

    it = BatchIterator(src)
    for _ in range(13):  # crosses the epoch boundary at 10
        it.next_batch()
    state = it.get_state()
    # pipekit's own small state, JSON-able, with no Grain-private fields
    assert json.loads(json.dumps(state)) == {"position": 13, "source": repr(src)}

    resumed = BatchIterator(BatchSource(toy_data(103), 10, seed=5))
    resumed.set_state(state)
    for i in range(13, 40):
        assert_batches_equal(resumed.next_batch(), expected[i])


def test_fresh_state_restores_to_the_start():
    src = BatchSource(toy_data(50), 10, seed=0)
    it = BatchIterator(src)
    fresh = it.get_state()
    first = it.next_batch()
    it.next_batch()
    it.set_state(fresh)
    assert_batches_equal(it.next_batch(), first)


def test_state_of_another_source_is_refused():
    state = BatchIterator(BatchSource(toy_data(50), 10, seed=0)).get_state()
    other = BatchIterator(BatchSource(toy_data(50), 5, seed=0))
    with pytest.raises(CheckpointError, match="different data source"):
        other.set_state(state)
