"""A ``grain.MapDataset`` read in its own order resumes bit-identically after SIGKILL.

Issue 36, item 4: the user's ``MapDataset.source(records).shuffle(seed)`` is read in its
own index order (batch ``i`` is its elements ``i*B … (i+1)*B - 1``, later epochs as Grain
defines them), so the checkpoint's data state is just the position. Real subprocesses
(``_byo_worker.py``, DATA ``mapds``, 96 records, batch 16, 40 steps: several epochs):
an uninterrupted run and one SIGKILLed at step 24 then run again; the final carry and
every loss after the resume are compared bit for bit.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from _byo_runs import assert_same_bits, run_worker, summary


@pytest.mark.slow
def test_map_dataset_sigkill_resume_is_bit_identical(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    ref = summary(run_worker(tmp_path, "ref", "ref.npz", 0, "optax", "mapds", cache))
    assert ref["resumed_from_step"] is None and ref["final_step"] == 40
    killed = run_worker(tmp_path, "ckpt", "out.npz", 24, "optax", "mapds", cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    resumed = summary(run_worker(tmp_path, "ckpt", "out.npz", 0, "optax", "mapds", cache))
    assert resumed["resumed_from_step"] in (10, 20) and resumed["final_step"] == 40
    assert_same_bits(tmp_path / "ref.npz", tmp_path / "out.npz")
