"""Running the resume workers in subprocesses and comparing what their runs leave behind:
``_byo_worker.py`` (the user's own optax object or data stream) and ``_resume_worker.py``
(the dropout-MLP digits job, with a time cadence)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
from _eqx_helpers import subprocess_env

WORKER = Path(__file__).with_name("_byo_worker.py")
RESUME_WORKER = Path(__file__).with_name("_resume_worker.py")


def run_worker(
    tmp: Path, ckpt: str, out: str, kill_at: int, optimizer: str, data: str, cache: Path
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(WORKER), str(tmp / ckpt), str(tmp / out), str(kill_at)]
        + [optimizer, data],
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(JAX_PLATFORMS="cpu", PIPEKIT_TEST_JAX_CACHE=str(cache)),
        cwd=str(WORKER.parent),
    )


def run_resume_worker(
    tmp: Path, ckpt: str, out: str, k: int, kill_at: int, hook: str, cache: Path
) -> subprocess.CompletedProcess[str]:
    """``_resume_worker.py`` with ``k`` steps per call, killed at ``kill_at`` by ``hook``."""
    return subprocess.run(
        [sys.executable, str(RESUME_WORKER), str(tmp / ckpt), str(tmp / out), str(k)]
        + [str(kill_at), hook],
        capture_output=True,
        text=True,
        timeout=300,
        env=subprocess_env(PIPEKIT_TEST_JAX_CACHE=str(cache)),
        cwd=str(WORKER.parent),
    )


def summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def assert_same_bits(ref_path: Path, got_path: Path) -> None:
    """The final carry bit for bit, and the loss of every step the second run ran."""
    ref, got = np.load(ref_path), np.load(got_path)
    keys = [k for k in ref.files if k.startswith("carry_")]
    assert keys and sorted(keys) == sorted(k for k in got.files if k.startswith("carry_"))
    for key in keys:
        assert got[key].tobytes() == ref[key].tobytes(), key
    ref_losses = dict(zip(ref["loss_steps"].tolist(), ref["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_steps"].tolist(), got["losses"].tolist(), strict=True))
    assert got_losses, "the resumed run ran no step"
    for step, loss in got_losses.items():
        assert loss == ref_losses[step], f"loss differs at step {step}"
