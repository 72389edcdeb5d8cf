"""``BatchIterator.prefetch`` prepares the next chunk without moving the position.

The driver prefetches at a host event, before the checkpoint that records the data position,
so the position must stay where the steps run so far put it; the next ``next_chunk`` must return
exactly the batches it would have gathered, and a prefetch that no longer fits (another chunk
length, a restore) must be dropped.
"""

from __future__ import annotations

import jax
import numpy as np
from _data_helpers import assert_batches_equal, toy_data

from pipekit_train.engine import BatchIterator, BatchSource


def _iterator() -> BatchIterator:
    return BatchIterator(BatchSource(toy_data(103), 10, seed=2))


def test_prefetch_keeps_the_position_and_next_chunk_returns_the_same_batches():
    it, ref = _iterator(), _iterator()
    it.next_chunk(3), ref.next_chunk(3)
    it.prefetch(4)
    assert it.get_state() == ref.get_state()  # a checkpoint here records position 3
    assert_batches_equal(it.next_chunk(4), ref.next_chunk(4))
    assert it.position == ref.position == 7
    assert_batches_equal(it.next_chunk(4), ref.next_chunk(4))  # and it is used only once


def test_placed_prefetch_comes_back_on_the_device():
    it, ref = _iterator(), _iterator()
    it.prefetch(5, jax.device_put)
    chunk = it.next_chunk(5)
    assert all(isinstance(v, jax.Array) for v in chunk.values())
    assert_batches_equal({k: np.asarray(v) for k, v in chunk.items()}, ref.next_chunk(5))


def test_a_prefetch_of_another_length_or_before_a_restore_is_dropped():
    it, ref = _iterator(), _iterator()
    it.prefetch(4)
    assert_batches_equal(it.next_chunk(2), ref.next_chunk(2))  # other k: gathered afresh
    it.prefetch(3)
    it.set_state({"position": 9, "source": repr(it.source)})
    ref.set_state({"position": 9, "source": repr(ref.source)})
    assert_batches_equal(it.next_chunk(3), ref.next_chunk(3))
