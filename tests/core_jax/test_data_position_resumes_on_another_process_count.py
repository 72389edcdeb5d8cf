"""The data position is pipekit's own small state in the checkpoint meta, on any process count.

A ``BatchIterator``'s state is ``{"position", "source"}``: the count of global
batches consumed and the source's repr (which leaves out the process index and
count). It goes into the checkpoint's JSON meta, so a run checkpointed by two
processes resumes on one (the real multi-process path is
``scripts/multihost_sharding_smoke.py``). No Grain-private state format is written.
"""

from __future__ import annotations

import json

import numpy as np
from _ckpt_helpers import FINGERPRINT, make_state, template

from pipekit_train.engine import BatchIterator, BatchSource
from pipekit_train.jax.checkpoint import Checkpointer


def _data(process_index: int = 0, process_count: int = 1) -> BatchIterator:
    x = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
    source = BatchSource(
        {"x": x, "y": np.arange(40)},
        8,
        seed=0,
        process_index=process_index,
        process_count=process_count,
    )
    return BatchIterator(source)


def test_two_process_position_resumes_one_process(tmp_path):
    second_of_two = _data(1, 2)
    for _ in range(5):
        second_of_two.next_batch()
    with Checkpointer(tmp_path, keep_last=None, fingerprint=FINGERPRINT) as ck:
        ck.save(5, make_state(5.0), {"data": second_of_two.get_state()})
    meta = json.loads((tmp_path / "5" / "meta" / "metadata").read_text())
    assert meta["data"]["position"] == 5
    assert not (tmp_path / "5" / "data").exists()  # no Grain-private item

    reference = _data()
    for _ in range(5):
        reference.next_batch()
    fresh = _data()
    with Checkpointer(tmp_path, keep_last=None, fingerprint=FINGERPRINT) as ck:
        result = ck.restore(template())
    assert result is not None
    fresh.set_state(result.meta["data"])
    np.testing.assert_array_equal(fresh.next_batch()["y"], reference.next_batch()["y"])
