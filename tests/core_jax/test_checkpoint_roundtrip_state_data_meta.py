"""One composite checkpoint brings back the state pytree, the Grain iterator and the meta dict."""

from __future__ import annotations

import json

import numpy as np
from _ckpt_helpers import FINGERPRINT, assert_state_equal, data_iterator, make_state, template

from pipekit_train.engine import BatchIterator
from pipekit_train.jax.checkpoint import Checkpointer


def test_roundtrip(tmp_path):
    it = BatchIterator(data_iterator().source)
    for _ in range(7):
        it.next_batch()
    state = make_state(3.0)
    meta = {
        "metrics": {"loss": np.float32(0.25), "acc": 0.9},
        "best": {"loss": 0.2},
        "callbacks": [{"patience": 1}],
        "data": it.get_state(),
    }
    with Checkpointer(tmp_path / "ck", keep_last=3, fingerprint=FINGERPRINT) as ck:
        assert ck.save(7, state, meta)
        ck.wait()
        assert ck.latest_step() == 7 and ck.all_steps() == [7]
        assert not ck.save(7, state, meta)  # an existing step is left alone
    expected_next = it.next_batch()

    with Checkpointer(tmp_path / "ck", keep_last=3, fingerprint=FINGERPRINT) as ck:
        fresh = BatchIterator(data_iterator().source)
        result = ck.restore(template())
    assert result is not None
    fresh.set_state(result.meta["data"])
    assert result.step == 7
    assert_state_equal(result.state, state)
    assert result.meta["metrics"] == {"loss": 0.25, "acc": 0.9}
    assert result.meta["best"] == {"loss": 0.2} and result.meta["callbacks"] == [{"patience": 1}]
    assert (
        result.meta["fingerprint"] == json.loads(json.dumps(FINGERPRINT))
        and result.meta["step"] == 7
    )
    np.testing.assert_array_equal(fresh.next_batch()["y"], expected_next["y"])
    # nothing but step directories in the checkpoint dir: no side files
    assert sorted(p.name for p in (tmp_path / "ck").iterdir()) == ["7"]


def test_empty_dir_is_a_fresh_start_and_state_only_checkpoints_work(tmp_path):
    with Checkpointer(tmp_path / "ck", keep_last=None, fingerprint=FINGERPRINT) as ck:
        assert ck.restore(template()) is None
        ck.save(1, make_state(1.0), {})
        ck.wait()
        result = ck.restore(template())
    assert result is not None and result.step == 1
    assert_state_equal(result.state, make_state(1.0))


def test_trace_is_in_the_same_commit_and_comes_back_as_numpy(tmp_path):
    trace = {"theta": np.arange(12, dtype=np.float32).reshape(6, 2), "mu": np.ones(6)}
    with Checkpointer(tmp_path / "ck", keep_last=None, fingerprint=FINGERPRINT) as ck:
        ck.save(6, make_state(6.0), {}, trace)
        ck.wait()
        result = ck.restore(template())
    assert result is not None and result.trace is not None
    assert sorted(result.trace) == ["mu", "theta"]
    for name, value in trace.items():
        assert isinstance(result.trace[name], np.ndarray)
        np.testing.assert_array_equal(result.trace[name], value)
        assert result.trace[name].dtype == value.dtype
    items = {p.name for p in (tmp_path / "ck" / "6").iterdir() if p.is_dir()}
    assert items == {"checksums", "meta", "state", "trace"}  # one step folder, one commit
