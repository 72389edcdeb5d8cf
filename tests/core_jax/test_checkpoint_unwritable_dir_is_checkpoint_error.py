"""An unusable checkpoint_dir is a CheckpointError naming it, raised before anything is written."""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT

from pipekit_train.errors import CheckpointError
from pipekit_train.jax.checkpoint import Checkpointer


def test_path_under_a_regular_file(tmp_path):
    # chmod does not stop root, so use a path that cannot be created at all
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    target = blocker / "ckpt"
    with pytest.raises(CheckpointError, match="checkpoint_dir") as info:
        Checkpointer(target, keep_last=2, fingerprint=FINGERPRINT)
    assert str(target) in str(info.value)
    assert blocker.read_text() == "x"


def test_path_that_is_a_regular_file(tmp_path):
    target = tmp_path / "ckpt"
    target.write_text("not a dir")
    with pytest.raises(CheckpointError, match="not a writable directory"):
        Checkpointer(target, keep_last=2, fingerprint=FINGERPRINT)
    assert target.read_text() == "not a dir"


def test_missing_directory_is_created_and_left_empty(tmp_path):
    target = tmp_path / "a" / "b"
    with Checkpointer(target, keep_last=2, fingerprint=FINGERPRINT):
        pass
    assert target.is_dir() and not list(target.iterdir())
