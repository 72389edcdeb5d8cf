"""keep_last bounds the number of steps on disk; the newest ones are kept."""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT, data_iterator, make_state

from pipekit_train.errors import ConfigError
from pipekit_train.jax.checkpoint import Checkpointer


def test_only_the_last_two_remain(tmp_path):
    it = data_iterator()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        for step in range(1, 6):
            it.next_batch()
            ck.save(step, make_state(float(step)), {})
        ck.wait()
        assert ck.all_steps() == [4, 5]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["4", "5"]


def test_none_keeps_everything_and_zero_is_refused(tmp_path):
    with Checkpointer(tmp_path / "a", keep_last=None, fingerprint=FINGERPRINT) as ck:
        for step in (1, 2, 3):
            ck.save(step, make_state(float(step)), {})
        ck.wait()
        assert ck.all_steps() == [1, 2, 3]
    with pytest.raises(ConfigError, match="keep_last"):
        Checkpointer(tmp_path / "b", keep_last=0, fingerprint=FINGERPRINT)
