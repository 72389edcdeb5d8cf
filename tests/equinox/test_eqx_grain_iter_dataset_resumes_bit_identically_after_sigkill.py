"""A ``grain.IterDataset`` run killed with SIGKILL resumes bit-identically (issue 20).

The user's own Grain pipeline (shuffle, repeat, ``to_iter_dataset``) of single
examples; pipekit batches them. Grain's iterator state is saved in the same
checkpoint commit as the model, so the rerun continues the stream exactly where
the checkpoint left it. Real subprocesses: an uninterrupted 40-step run and one
SIGKILLed at step 24 then run again; the final carry and every loss after the
resume are compared bit for bit. The worker's optimiser is the user's own optax
object too (item 1 and item 2 together).
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from _byo_runs import assert_same_bits, run_worker, summary


@pytest.mark.slow
def test_iter_dataset_sigkill_resume_is_bit_identical(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ref = summary(run_worker(tmp_path, "ref", "ref.npz", 0, "optax", "iter", cache))
    assert ref["resumed_from_step"] is None and ref["final_step"] == 40
    killed = run_worker(tmp_path, "ckpt", "out.npz", 24, "optax", "iter", cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    resumed = summary(run_worker(tmp_path, "ckpt", "out.npz", 0, "optax", "iter", cache))
    assert resumed["resumed_from_step"] in (10, 20) and resumed["final_step"] == 40
    assert_same_bits(tmp_path / "ref.npz", tmp_path / "out.npz")
