"""CPU DDP with two processes (gloo): the ranks end identical, and equal to one process.

``strategy="ddp"``, ``devices=2`` on CPU: each rank reads its half of every global
batch (pipekit splits the global batch; Lightning's distributed sampler is off),
DDP averages the gradients, so the run equals one process training on the same
global batches of 32 — within float tolerance (the all-reduce sums in another order).
The logged loss is the mean over ranks, so it matches the one-process loss too.
A time-based checkpoint decision is rank 0's on every rank (the other ranks' clocks would
never save): both ranks record the same saves, at log steps, more than the final one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from _ddp_worker import run_job

WORKER = Path(__file__).with_name("_ddp_worker.py")


def _run(out: Path, devices: int) -> None:
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(out), str(devices)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=out,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]


def test_two_ddp_ranks_are_identical_and_match_one_process(tmp_path: Path) -> None:
    _run(tmp_path / "ddp", 2)
    (tmp_path / "one").mkdir()
    run_job(str(tmp_path / "one"), 1)  # the one-process reference, in this process
    r0 = dict(np.load(tmp_path / "ddp" / "rank0.npz"))
    r1 = dict(np.load(tmp_path / "ddp" / "rank1.npz"))
    one = dict(np.load(tmp_path / "one" / "rank0.npz"))
    assert set(r0) == set(r1) == set(one)
    for key in r0:
        np.testing.assert_array_equal(r0[key], r1[key], err_msg=key)
        np.testing.assert_allclose(r0[key], one[key], rtol=1e-4, atol=1e-5, err_msg=key)
    i0 = json.loads((tmp_path / "ddp" / "rank0.json").read_text())
    i1 = json.loads((tmp_path / "ddp" / "rank1.json").read_text())
    ione = json.loads((tmp_path / "one" / "rank0.json").read_text())
    assert i0["final_step"] == i1["final_step"] == ione["final_step"] == 20
    assert i0["loss"] == i1["loss"]
    assert abs(i0["loss"] - ione["loss"]) < 1e-4
    assert i0["saves"] == i1["saves"] and i0["saves"][-1] == 20
    assert set(i0["saves"]) <= {5, 10, 15, 20} and len(i0["saves"]) > 1
