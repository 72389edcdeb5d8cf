"""A data-iterator state written by N processes restores on a different process count.

Grain saves ``process_<i>-of-<n>.json`` per process and looks only for its own
index and count; the checkpoint glue falls back to the saved states when they
are all the same (a ``BatchIterator``'s state is the count of consumed global
batches, identical on every process). Differing states are a ``CheckpointError``.
The real multi-process path is ``scripts/multihost_sharding_smoke.py``
(2 processes save, 1 resumes); here two processes' files are laid out by hand.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from _ckpt_helpers import FINGERPRINT, assert_state_equal, data_iterator, make_state, template

from pipekit_train.errors import CheckpointError
from pipekit_train.jax.checkpoint import Checkpointer


def _save_as_two_processes(directory, consumed: tuple[int, int]) -> None:
    """A step-5 checkpoint whose data item looks written by 2 processes."""
    iterators = [data_iterator() for _ in consumed]
    for it, n in zip(iterators, consumed, strict=True):
        for _ in range(n):
            it.next_batch()
    with Checkpointer(directory, keep_last=None, fingerprint=FINGERPRINT) as ck:
        ck.save(5, make_state(5.0), iterators[0].grain_iterator, {})
    data = directory / "5" / "data"
    own = data / "process_0-of-1.json"
    (data / "process_1-of-2.json").write_bytes(iterators[1].get_state())
    shutil.move(own, data / "process_0-of-2.json")


def test_identical_states_of_two_processes_restore_on_one(tmp_path):
    _save_as_two_processes(tmp_path / "ck", (5, 5))
    reference = data_iterator()
    for _ in range(5):
        reference.next_batch()
    fresh = data_iterator()
    with Checkpointer(tmp_path / "ck", keep_last=None, fingerprint=FINGERPRINT) as ck:
        result = ck.restore(template(), fresh.grain_iterator)
    assert result is not None and result.step == 5
    assert_state_equal(result.state, make_state(5.0))
    assert fresh.position == 5
    np.testing.assert_array_equal(fresh.next_batch()["y"], reference.next_batch()["y"])


def test_differing_states_are_a_checkpoint_error(tmp_path):
    _save_as_two_processes(tmp_path / "ck", (5, 4))
    with Checkpointer(tmp_path / "ck", keep_last=None, fingerprint=FINGERPRINT) as ck:
        with pytest.raises(CheckpointError, match="differ"):
            ck.restore(template(), data_iterator().grain_iterator)
    assert (tmp_path / "ck" / "5").is_dir()  # a readable step is never quarantined
