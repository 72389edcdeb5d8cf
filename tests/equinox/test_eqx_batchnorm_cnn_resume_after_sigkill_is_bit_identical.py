"""A stateful (batch-norm) CNN killed with SIGKILL and run again resumes to the same bits.

Real subprocesses, a real SIGKILL (``_cnn_resume_worker.py``): 40 steps in one go
(``steps_per_call=4``) == the same job to step 24, SIGKILL, run it again →
resume from the newest committed checkpoint → 40 steps. The whole final carry is
compared bit for bit — parameters, optimiser state, step, the batch-norm running
statistics and the EMA of the weights — and so are the op's weights and state,
its predictions, and the loss of every step run after the resume.

Both runs fuse 4 steps a call: for this convolutional model XLA's CPU code for a
step inside the 4-step scan differs in the last bits from the one-step call (the
MLP tests see no difference), so the reference is the same job uninterrupted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
from _eqx_helpers import HERE, subprocess_env

WORKER = HERE / "_cnn_resume_worker.py"


def _run(ckpt: Path, out: Path, k: int, kill_at: int, cache: Path):
    env = subprocess_env(PIPEKIT_TEST_JAX_CACHE=str(cache), JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = f"{HERE}{os.pathsep}{env['PYTHONPATH']}"
    return subprocess.run(
        [sys.executable, str(WORKER), str(ckpt), str(out), str(k), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=HERE,
    )


def _summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_sigkill_then_rerun_matches_uninterrupted_run_including_bn_state_and_ema(tmp_path):
    cache = tmp_path / "jax_cache"
    ref = _summary(_run(tmp_path / "ref_ckpt", tmp_path / "ref.npz", 4, 0, cache))
    assert ref["resumed_from_step"] is None and ref["final_step"] == 40

    killed = _run(tmp_path / "ckpt", tmp_path / "out.npz", 4, 24, cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= 24

    info = _summary(_run(tmp_path / "ckpt", tmp_path / "out.npz", 4, 0, cache))
    assert info["resumed_from_step"] in committed and info["final_step"] == 40

    want, got = np.load(tmp_path / "ref.npz"), np.load(tmp_path / "out.npz")
    keys = [k for k in want.files if k.startswith(("carry_", "op_", "opstate_"))]
    assert sorted(keys) == sorted(
        k for k in got.files if k.startswith(("carry_", "op_", "opstate_"))
    )
    assert any(k.startswith("opstate_") for k in keys)
    for key in [*keys, "prediction"]:
        assert got[key].tobytes() == want[key].tobytes(), key
    ref_losses = dict(zip(want["loss_steps"].tolist(), want["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_steps"].tolist(), got["losses"].tolist(), strict=True))
    assert got_losses
    for step, loss in got_losses.items():
        assert loss == ref_losses[step], f"loss differs at step {step}"
