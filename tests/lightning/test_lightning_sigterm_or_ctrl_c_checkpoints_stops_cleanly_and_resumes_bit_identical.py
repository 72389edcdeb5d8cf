"""SIGTERM or the first Ctrl-C mid-epoch: checkpoint at that step, return normally, resume exactly.

A real subprocess sends itself SIGTERM at step 21 (no checkpoint is due there;
they are every 10). Lightning's own SIGTERM handling would end ``fit`` having saved
nothing; with pipekit the run writes a checkpoint at step 21, exits 0 with
``backend_info["interrupted"] == "SIGTERM"`` (or ``"SIGINT"``) and a stop reason, and
running the job again resumes from 21 and ends bit-identical to the uninterrupted run.
Ctrl-C alone is not Lightning's concern (it would raise ``KeyboardInterrupt`` and exit 1);
pipekit's handler turns the first one into the same checkpoint-and-stop.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _resume_helpers import run_worker


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_signal_checkpoints_stops_cleanly_and_resumes(
    tmp_path: Path, reference: dict[str, np.ndarray], sig: str
) -> None:
    ckpt = tmp_path / "ckpt"
    assert run_worker(ckpt, tmp_path / "stopped.npz", 0, kill_at=21, sig=sig) == 0
    info = json.loads((tmp_path / "stopped.npz.json").read_text())
    assert info["interrupted"] == sig
    assert info["final_step"] == 21 and info["last_checkpoint_step"] == 21
    assert sig in info["stop_reason"]
    assert (ckpt / "step-000000021.pt").exists()

    run_worker(ckpt, tmp_path / "resumed.npz", 0)
    info = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert info["resumed_from_step"] == 21 and info["final_step"] == 40
    resumed = dict(np.load(tmp_path / "resumed.npz"))
    for key in (k for k in reference if k.startswith(("module/", "opt/"))):
        np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
