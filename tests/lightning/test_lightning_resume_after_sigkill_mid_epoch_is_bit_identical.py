"""SIGKILL mid-epoch, run the same job again: parameters and AdamW state are bit-identical.

Real subprocesses (``_resume_worker.py``): a dropout MLP, a cosine schedule, 40 steps
over an epoch boundary (28 steps per epoch), checkpoints every 10. The job kills
itself with SIGKILL at step 21 (one step after a checkpoint, mid-epoch); the rerun
resumes from step 20 and must end exactly where an uninterrupted run ends — the
module's state_dict, every AdamW moment and step count, and the loss of every
step after the resume point. With ``num_workers`` 2 (the data order is pipekit's, a pure
function of (seed, batch index), so worker processes do not change it); in-process loading
is the contract kit's SIGKILL check (``test_lightning_passes_the_backend_contract.py``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _resume_helpers import run_worker as _run


@pytest.mark.parametrize("workers", [2])
def test_sigkill_mid_epoch_then_resume_is_bit_identical(
    tmp_path: Path, reference: dict[str, np.ndarray], workers: int
) -> None:
    ckpt = tmp_path / "ckpt"
    rc = _run(ckpt, tmp_path / "killed.npz", workers, kill_at=21)
    assert rc == -9
    assert not (tmp_path / "killed.npz").exists()
    assert sorted(p.name for p in ckpt.glob("step-*.pt")) == [
        "step-000000010.pt",
        "step-000000020.pt",
    ]
    _run(ckpt, tmp_path / "resumed.npz", workers)
    info = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert info["resumed_from_step"] == 20 and info["final_step"] == 40
    resumed = dict(np.load(tmp_path / "resumed.npz"))
    keys = [k for k in reference if k.startswith(("module/", "opt/"))]
    assert any(k.endswith("exp_avg_sq") for k in keys)
    for key in keys:
        np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
    ref_losses = dict(
        zip(reference["losses_steps"].tolist(), reference["losses"].tolist(), strict=True)
    )
    got = dict(zip(resumed["losses_steps"].tolist(), resumed["losses"].tolist(), strict=True))
    assert min(got) == 21
    assert got == {s: ref_losses[s] for s in got}
