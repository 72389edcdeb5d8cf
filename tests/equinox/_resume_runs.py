"""Runs ``_resume_worker.py`` (the dropout-MLP digits job) in a subprocess and compares the
bits of two of its runs: the time-cadence resume test's tools."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).with_name("_resume_worker.py")


def run_worker(tmp: Path, ckpt: str, out: str, k: int, kill_at: int, hook: str, cache: Path):
    env = dict(os.environ, PIPEKIT_TEST_JAX_CACHE=str(cache))
    return subprocess.run(
        [sys.executable, str(WORKER), str(tmp / ckpt), str(tmp / out), str(k), str(kill_at), hook],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def assert_same_bits(ref_path: Path, got_path: Path) -> None:
    ref, got = np.load(ref_path), np.load(got_path)
    carry_keys = [key for key in ref.files if key.startswith(("carry_", "param_"))]
    assert carry_keys and sorted(carry_keys) == sorted(
        key for key in got.files if key.startswith(("carry_", "param_"))
    )
    for key in carry_keys:
        np.testing.assert_array_equal(got[key], ref[key], err_msg=key)
        assert got[key].tobytes() == ref[key].tobytes(), key
    ref_losses = dict(zip(ref["loss_steps"].tolist(), ref["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_steps"].tolist(), got["losses"].tolist(), strict=True))
    assert got_losses, "the resumed run ran no step"
    for step, loss in got_losses.items():
        assert loss == ref_losses[step], f"loss differs at step {step}"
