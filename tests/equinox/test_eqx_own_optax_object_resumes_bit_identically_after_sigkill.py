"""The user's own optax object trains, and a run killed with SIGKILL resumes to the same bits.

Issue 20: ``optimizer_config`` may be an ``optax.GradientTransformation`` (here a
chain of global-norm clipping and an ``inject_hyperparams`` adamw on a cosine
schedule). Real subprocesses: an uninterrupted 40-step run, and one SIGKILLed at
step 24 then run again; the final carry (parameters, optimiser state, step) and
every loss after the resume are compared bit for bit. A rerun with a different
optax object is refused with a ``CheckpointError`` naming ``optimizer_config``,
and the checkpoints are left as they were.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from _byo_runs import assert_same_bits, run_worker, summary


@pytest.mark.slow
def test_optax_object_sigkill_resume_is_bit_identical_and_another_object_is_refused(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    ref = summary(run_worker(tmp_path, "ref", "ref.npz", 0, "optax", "map", cache))
    assert ref["resumed_from_step"] is None and ref["final_step"] == 40
    assert ref["optimizer"]["lr_logged"] is True  # inject_hyperparams: the live lr is logged

    killed = run_worker(tmp_path, "ckpt", "out.npz", 24, "optax", "map", cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    kept = sorted(p.name for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())

    other = run_worker(tmp_path, "ckpt", "other.npz", 0, "optax-other", "map", cache)
    assert other.returncode == 3, other.stdout + other.stderr[-3000:]
    assert "ERROR CheckpointError" in other.stdout and "optimizer_config" in other.stdout
    assert sorted(p.name for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit()) == kept

    resumed = summary(run_worker(tmp_path, "ckpt", "out.npz", 0, "optax", "map", cache))
    # the checkpoint of step 20 may still have been in flight (asynchronous) at the kill
    assert resumed["resumed_from_step"] in (10, 20) and resumed["final_step"] == 40
    assert_same_bits(tmp_path / "ref.npz", tmp_path / "out.npz")
