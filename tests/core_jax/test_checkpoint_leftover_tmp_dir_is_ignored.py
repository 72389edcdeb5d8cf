"""An unfinalised Orbax tmp dir (a run killed mid-save) neither crashes init nor counts."""

from __future__ import annotations

from _ckpt_helpers import FINGERPRINT, assert_state_equal, make_state, template

from pipekit_train.jax.checkpoint import Checkpointer


def test_leftover_tmp_dirs(tmp_path):
    with Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT) as ck:
        ck.save(2, make_state(2.0), {})
    for name in ("3.orbax-checkpoint-tmp", "4.orbax-checkpoint-tmp-1234567"):
        leftover = tmp_path / name / "state"
        leftover.mkdir(parents=True)
        (leftover / "half-written").write_bytes(b"\0" * 100)
    with Checkpointer(tmp_path, keep_last=3, fingerprint=FINGERPRINT) as ck:
        assert ck.all_steps() == [2]
        result = ck.restore(template())
        assert result is not None and result.step == 2
        assert_state_equal(result.state, make_state(2.0))
        ck.save(3, make_state(3.0), {})  # same step as a leftover: fine
        ck.wait()
        assert ck.all_steps() == [2, 3]
    assert not list(tmp_path.glob("*orbax-checkpoint-tmp*"))
