"""SIGKILL a Lightning run with accumulation and ``ema_decay``; the rerun is bit-identical.

``_resume_worker.py`` with ``PIPEKIT_TEST_FEATURES=1``: two micro-batches per optimiser
step, the EMA of the weights on. The job SIGKILLs itself at step 21 (one update after
the checkpoint of step 20); the rerun resumes from step 20 — module, AdamW state and the
EMA from the checkpoint, the data at micro-batch 40 — and must end exactly where an
uninterrupted run ends: the op's weights (the average), the last checkpoint's module,
optimiser state and EMA, and the per-update loss of every step after the resume.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).with_name("_resume_worker.py")
ENV = dict(os.environ, PIPEKIT_TEST_FEATURES="1")


def _run(ckpt: Path, out: Path, kill_at: int = 0) -> int:
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(ckpt), str(out), "0", str(kill_at), "SIGKILL"],
        capture_output=True, text=True, timeout=300, env=ENV,
    )  # fmt: skip
    if kill_at == 0:
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.returncode


def test_sigkill_then_resume_with_accumulation_and_ema_is_bit_identical(tmp_path: Path) -> None:
    _run(tmp_path / "ref-ckpt", tmp_path / "ref.npz")
    reference = dict(np.load(tmp_path / "ref.npz"))
    ckpt = tmp_path / "ckpt"
    assert _run(ckpt, tmp_path / "killed.npz", kill_at=21) == -9
    assert sorted(p.name for p in ckpt.glob("step-*.pt"))[-1] == "step-000000020.pt"
    _run(ckpt, tmp_path / "resumed.npz")
    info = json.loads((tmp_path / "resumed.npz.json").read_text())
    assert info["resumed_from_step"] == 20 and info["final_step"] == 40
    resumed = dict(np.load(tmp_path / "resumed.npz"))
    keys = [k for k in reference if k.startswith(("module/", "opt/", "ema/"))]
    assert any(k.startswith("ema/") for k in keys) and any(k.endswith("exp_avg_sq") for k in keys)
    for key in keys:
        np.testing.assert_array_equal(resumed[key], reference[key], err_msg=key)
    ref_losses = dict(
        zip(reference["losses_steps"].tolist(), reference["losses"].tolist(), strict=True)
    )
    got = dict(zip(resumed["losses_steps"].tolist(), resumed["losses"].tolist(), strict=True))
    assert min(got) == 21 and max(got) == 40
    assert got == {s: ref_losses[s] for s in got}
