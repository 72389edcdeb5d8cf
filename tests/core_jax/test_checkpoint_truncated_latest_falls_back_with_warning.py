"""A corrupted latest step is renamed aside (never deleted) and the next newest is restored."""

from __future__ import annotations

import os

import numpy as np
import pytest
from _ckpt_helpers import FINGERPRINT, assert_state_equal, data_iterator, make_state, template

from pipekit_train.jax.checkpoint import Checkpointer

# When a tensorstore read fails, Orbax leaves a callback that fires after its private event
# loop closed ("Event loop is closed"): noise from the failure path, not a test failure.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _write_steps(directory, steps):
    """Save ``steps`` with the iterator at position ``step`` (step batches consumed)."""
    it = data_iterator()
    with Checkpointer(directory, keep_last=5, fingerprint=FINGERPRINT) as ck:
        for step in steps:
            while it.position < step:
                it.next_batch()
            trace = {"draws": np.full((step, 3), float(step), np.float32)}
            ck.save(
                step,
                make_state(float(step), width=4096),
                {"step_note": step, "data": it.get_state()},
                trace,
            )


def _truncate_largest_file(step_dir):
    files = [
        p for p in (step_dir / "state").rglob("*") if p.is_file() and "ocdbt.process" not in str(p)
    ]
    victim = max(files, key=lambda p: p.stat().st_size)
    with open(victim, "r+b") as f:
        f.truncate(victim.stat().st_size // 2)


@pytest.mark.parametrize(
    "damage",
    ["truncate-array-data", "garbage-meta", "garbage-trace", "array-metadata-zeroed"],
)
def test_falls_back_to_previous_step(tmp_path, damage):
    _write_steps(tmp_path, [1, 2, 3])
    bad = tmp_path / "3"
    if damage == "truncate-array-data":
        _truncate_largest_file(bad)
    elif damage == "garbage-meta":
        (bad / "meta" / "metadata").write_text('{"fingerp')
    elif damage == "garbage-trace":  # the trace is zarr arrays too: garble one's metadata
        zarray = sorted((bad / "trace").rglob(".zarray"))[0]
        zarray.write_text('{"chunks": [')
    else:  # the state item is zarr arrays (no OCDBT): zero one array's metadata
        zarray = sorted((bad / "state").rglob(".zarray"))[0]
        zarray.write_bytes(b"\0" * zarray.stat().st_size)

    it = data_iterator()
    ck = Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT)
    with pytest.warns(UserWarning, match="step 3") as record:
        result = ck.restore(template(width=4096))
    assert result is not None and result.step == 2
    assert_state_equal(result.state, make_state(2.0, width=4096))
    np.testing.assert_array_equal(result.trace["draws"], np.full((2, 3), 2.0, np.float32))
    it.set_state(result.meta["data"])
    np.testing.assert_array_equal(it.next_batch()["y"], it.source[2]["y"])
    assert any("3.corrupt" in str(w.message) for w in record)
    assert (
        not (tmp_path / "3").exists() and (tmp_path / "3.corrupt").is_dir()
    )  # renamed, not deleted
    assert ck.all_steps() == [1, 2]

    # training continues: saving step 3 again (after falling back) works, keep_last applies
    ck.save(3, make_state(3.5, width=4096), {})
    ck.save(4, make_state(4.0, width=4096), {})
    ck.wait()
    assert ck.all_steps() == [3, 4]
    assert (tmp_path / "3.corrupt").is_dir()
    ck.close()


def test_no_readable_step_left_means_fresh_start_with_warning(tmp_path):
    _write_steps(tmp_path, [1, 2])
    for step in ("1", "2"):
        _truncate_largest_file(tmp_path / step)
    it = data_iterator()
    first = data_iterator().next_batch()
    with Checkpointer(tmp_path, keep_last=2, fingerprint=FINGERPRINT) as ck:
        with pytest.warns(UserWarning) as record:
            assert ck.restore(template(width=4096)) is None
    messages = " ".join(str(w.message) for w in record)
    assert "step 2" in messages and "step 1" in messages and "starting from scratch" in messages
    assert sorted(os.listdir(tmp_path)) == ["1.corrupt", "2.corrupt"]
    np.testing.assert_array_equal(it.next_batch()["y"], first["y"])  # iterator left at the start
