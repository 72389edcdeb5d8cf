"""A spawned Grain worker process (worker_count=1) delivers the same batches and state as 0."""

from __future__ import annotations

from _data_helpers import assert_batches_equal, toy_data

from pipekit_train.engine import BatchIterator, BatchSource
from pipekit_train.jax.data import GrainBatchIterator


def test_worker_process_matches_in_process_reading():
    src = BatchSource(toy_data(103), 10, seed=6)
    inproc = GrainBatchIterator(src, worker_count=0)
    worker = GrainBatchIterator(src, worker_count=1)
    try:
        for _ in range(23):
            assert_batches_equal(worker.next_batch(), inproc.next_batch())
        # the worker's state resumes an in-process iterator at the same place
        resumed = BatchIterator(src)
        resumed.set_state(worker.get_state())
        assert_batches_equal(resumed.next_batch(), inproc.next_batch())
    finally:
        worker.close()
