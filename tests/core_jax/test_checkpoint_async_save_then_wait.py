"""save() returns before the write commits; wait() makes it durable; the iterator can move on."""

from __future__ import annotations

import numpy as np
from _ckpt_helpers import FINGERPRINT, assert_state_equal, data_iterator, make_state, template

from pipekit_train.jax.checkpoint import Checkpointer


def test_async_save_commits_after_wait(tmp_path):
    it = data_iterator()
    it.next_batch()
    # ~28 MB: the background commit takes ~0.1 s here, the blocking part of save() ~0.04 s.
    big = make_state(5.0, width=1_000_000)
    ck = Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT, async_save=True)
    assert ck.save(5, big, {"note": "async", "data": it.get_state()})
    # save() has returned, but the step is not committed yet: the finalised `5/` does not
    # exist (Orbax creates its temporary folder asynchronously too, so that folder may or
    # may not be there yet).
    assert not (tmp_path / "5").exists()
    expected = it.next_batch()  # moving on at once does not change what was saved
    it.next_batch()
    ck.wait()
    assert (tmp_path / "5").is_dir() and not list(tmp_path.glob("*tmp*"))
    ck.close()

    fresh = data_iterator()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck2:
        result = ck2.restore(template(width=1_000_000))
    assert result is not None and result.meta["note"] == "async"
    assert_state_equal(result.state, big)
    fresh.set_state(result.meta["data"])
    np.testing.assert_array_equal(fresh.next_batch()["y"], expected["y"])


def test_sync_mode_also_works(tmp_path):
    with Checkpointer(tmp_path, keep_last=1, fingerprint=FINGERPRINT, async_save=False) as ck:
        ck.save(1, make_state(1.0), {})
        assert (tmp_path / "1").is_dir()
