"""Resume guard: a different fingerprint is a CheckpointError naming each field; force overrides."""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT, assert_state_equal, make_state, template

from pipekit_train.errors import CheckpointError
from pipekit_train.fingerprint import fingerprint_diff
from pipekit_train.jax.checkpoint import Checkpointer


def _save_one(directory):
    with Checkpointer(directory, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(4, make_state(4.0), {})


def test_mismatch_names_fields_old_and_new_and_the_override(tmp_path):
    _save_one(tmp_path)
    changed = {**FINGERPRINT, "batch_size": 16, "optimizer": {"name": "sgd", "lr": 0.01}}
    with Checkpointer(tmp_path, keep_last=2, fingerprint=changed) as ck:
        with pytest.raises(CheckpointError) as info:
            ck.restore(template())
    message = str(info.value)
    assert "batch_size: checkpoint 8 != this run 16" in message
    assert "optimizer" in message and "'adam'" in message and "'sgd'" in message
    assert "seed" not in message and "dataset_len" not in message
    assert (
        '"resume": "force"' in message
        and '"resume": "never"' in message
        and "checkpoint_dir" in message
    )
    assert (tmp_path / "4").is_dir()  # nothing moved or deleted


def test_force_warns_and_resumes(tmp_path):
    _save_one(tmp_path)
    changed = {**FINGERPRINT, "seed": 1}
    with Checkpointer(tmp_path, keep_last=2, fingerprint=changed, resume="force") as ck:
        with pytest.warns(UserWarning, match="seed"):
            result = ck.restore(template())
    assert result is not None and result.step == 4
    assert_state_equal(result.state, make_state(4.0))


def test_fingerprint_diff():
    assert fingerprint_diff({"a": (1, 2), "b": 1}, {"a": [1, 2], "b": 1}) == {}
    assert fingerprint_diff({"a": 1, "b": 2}, {"a": 1, "c": 3}) == {
        "b": (2, "<missing>"),
        "c": ("<missing>", 3),
    }
