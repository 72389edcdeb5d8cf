"""Killing a run with SIGKILL and running it again resumes to the same bits.

DESIGN §4's resume contract, with real subprocesses and real signals: N steps in
one go == run to step k, SIGKILL, run the same job again → resume from the
newest committed checkpoint → N steps. Parameters, optimiser state and step
(the whole carry in the final checkpoint) are compared bit for bit, and so is
the loss of every step run after the resume — which only matches if the data
order and the RNG stream match too. The model has dropout, so the RNG matters.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).with_name("_resume_worker.py")


def _run(tmp: Path, ckpt: str, out: str, k: int, kill_at: int, hook: str, cache: Path):
    env = dict(os.environ, PIPEKIT_TEST_JAX_CACHE=str(cache))
    return subprocess.run(
        [sys.executable, str(WORKER), str(tmp / ckpt), str(tmp / out), str(k), str(kill_at), hook],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict]:
    tmp = tmp_path_factory.mktemp("reference")
    cache = tmp_path_factory.mktemp("jax_cache")
    info = _summary(_run(tmp, "ckpt", "ref.npz", 1, 0, "none", cache))
    assert info["resumed_from_step"] is None and info["final_step"] == 60
    return tmp / "ref.npz", cache, info


def _assert_same_bits(ref_path: Path, got_path: Path) -> None:
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


@pytest.mark.parametrize(
    ("steps_per_call", "kill_at", "hook"),
    [
        (1, 24, "step"),  # between checkpoints (the one at 20 may still be in flight)
        (7, 30, "checkpoint"),  # right after the checkpoint of step 30 was handed over
        (4, 51, "step"),  # late in the run, fused steps
    ],
)
def test_sigkill_then_rerun_matches_uninterrupted_run(
    tmp_path: Path, reference, steps_per_call: int, kill_at: int, hook: str
) -> None:
    ref_path, cache, _ = reference
    killed = _run(tmp_path, "ckpt", "out.npz", steps_per_call, kill_at, hook, cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not (tmp_path / "out.npz").exists()
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= kill_at

    info = _summary(_run(tmp_path, "ckpt", "out.npz", steps_per_call, 0, "none", cache))
    assert info["resumed_from_step"] in committed
    assert info["final_step"] == 60
    _assert_same_bits(ref_path, tmp_path / "out.npz")


def test_sigterm_checkpoints_at_the_boundary_and_exits_cleanly(tmp_path: Path, reference) -> None:
    ref_path, cache, _ = reference
    stopped = _run(tmp_path, "ckpt", "out.npz", 1, 33, "sigterm", cache)
    info = _summary(stopped)  # exit code 0, no traceback
    assert info["interrupted"] == "SIGTERM"
    assert info["final_step"] == 33
    assert (tmp_path / "ckpt" / "33").is_dir(), "SIGTERM must checkpoint the step it stopped at"

    resumed = _summary(_run(tmp_path, "ckpt", "out2.npz", 1, 0, "none", cache))
    assert resumed["resumed_from_step"] == 33
    _assert_same_bits(ref_path, tmp_path / "out2.npz")
