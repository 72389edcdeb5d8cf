"""A different model structure behind a matching fingerprint is a CheckpointError, not corrupt."""

from __future__ import annotations

import jax
import pytest
from _ckpt_helpers import FINGERPRINT, data_iterator, make_state, template

from pipekit_train.errors import CheckpointError
from pipekit_train.jax.checkpoint import Checkpointer


def test_shape_change_is_reported_and_the_checkpoint_kept(tmp_path):
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(3, make_state(3.0, width=8), {})
    it = data_iterator()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        with pytest.raises(
            CheckpointError, match=r"params\.w: shape \(3, 8\) in the checkpoint, \(3, 16\) now"
        ):
            ck.restore(template(width=16))
    assert (tmp_path / "3").is_dir() and not list(tmp_path.glob("*.corrupt"))
    assert it.position == 0


def test_missing_and_extra_leaves_are_listed(tmp_path):
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        ck.save(3, make_state(3.0), {})
    tmpl = template()
    tmpl["params"]["extra"] = jax.ShapeDtypeStruct((2,), "float32")
    del tmpl["params"]["b"]
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        with pytest.raises(CheckpointError) as info:
            ck.restore(tmpl)
    assert "params.b: in the checkpoint, not in this run's state" in str(info.value)
    assert "params.extra: in this run's state, not in the checkpoint" in str(info.value)
    assert (tmp_path / "3").is_dir()
