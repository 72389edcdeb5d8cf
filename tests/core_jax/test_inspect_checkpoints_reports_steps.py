"""inspect_checkpoints lists each step with its meta, validity and size, and writes nothing."""

from __future__ import annotations

import pytest
from _ckpt_helpers import FINGERPRINT, make_state

from pipekit_train.engine import inspect_checkpoints
from pipekit_train.errors import CheckpointError
from pipekit_train.jax.checkpoint import Checkpointer


def test_inspect(tmp_path):
    with Checkpointer(tmp_path, keep_last=5, fingerprint=FINGERPRINT) as ck:
        for step in (1, 2, 3):
            ck.save(step, make_state(float(step)), {"metrics": {"loss": 1.0 / step}})
    (tmp_path / "2" / "meta" / "metadata").write_text("{")
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    rows = inspect_checkpoints(tmp_path)
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert [r["valid"] for r in rows] == [True, False, True]
    assert "meta unreadable" in rows[1]["error"]
    assert (
        rows[2]["meta"]["metrics"] == {"loss": 1.0 / 3}
        and rows[2]["meta"]["fingerprint"]["seed"] == 0
    )
    assert all(r["size_bytes"] > 0 for r in rows)


def test_inspect_missing_dir(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        inspect_checkpoints(tmp_path / "nope")
