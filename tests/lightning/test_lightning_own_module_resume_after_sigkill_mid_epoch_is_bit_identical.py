"""Issue 20: the user's own ``LightningModule`` (its training_step, SGD + momentum and a
per-step ``StepLR`` halving at step 15, its dropout) SIGKILLed at step 21, one step after a
checkpoint and mid-epoch; the rerun resumes from step 20 and ends bit-identical to an
uninterrupted run: the state_dict, every momentum buffer, each step's loss and ``lr``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from _resume_helpers import run_worker

OWN = {"PIPEKIT_TEST_OWN": "1"}


def test_own_module_sigkill_then_resume_is_bit_identical(tmp_path: Path) -> None:
    run_worker(tmp_path / "ref", tmp_path / "ref.npz", 0, env=OWN)
    reference = dict(np.load(tmp_path / "ref.npz"))
    ckpt = tmp_path / "ckpt"
    assert run_worker(ckpt, tmp_path / "killed.npz", 0, kill_at=21, env=OWN) == -9
    run_worker(ckpt, tmp_path / "resumed.npz", 0, env=OWN)
    info = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert info["resumed_from_step"] == 20 and info["final_step"] == 40
    resumed = dict(np.load(tmp_path / "resumed.npz"))
    keys = [k for k in reference if k.startswith(("module/", "opt/"))]
    assert any(k.endswith("momentum_buffer") for k in keys)
    for key in keys:
        np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
    steps = reference["losses_steps"].tolist()
    ref_loss = dict(zip(steps, reference["losses"].tolist(), strict=True))
    ref_rate = dict(zip(steps, reference["rates"].tolist(), strict=True))
    assert ref_rate[15] == 0.1 and ref_rate[16] == 0.05 and ref_rate[40] == 0.025
    got_steps = resumed["losses_steps"].tolist()
    assert min(got_steps) == 21
    assert dict(zip(got_steps, resumed["losses"].tolist(), strict=True)) == {
        s: ref_loss[s] for s in got_steps
    }
    assert dict(zip(got_steps, resumed["rates"].tolist(), strict=True)) == {
        s: ref_rate[s] for s in got_steps
    }
