"""SIGKILL a numpyro-mcmc run anywhere, run it again: the draws are bit-identical to an
uninterrupted run and to NumPyro's own ``MCMC.run`` (real subprocesses, real signals).

Checkpoints come after warmup and every ``Checkpoint.every_n_steps`` steps and hold
the sampler state (adaptation included) and the draws so far in one Orbax commit.
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

HERE = Path(__file__).parent
WORKER = HERE / "_mcmc_resume_worker.py"


def _run(tmp: Path, out: str, k: int, kill_at: int, hook: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(HERE))
    return subprocess.run(
        [
            sys.executable,
            str(WORKER),
            str(tmp / "ckpt"),
            str(tmp / out),
            str(k),
            str(kill_at),
            hook,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def _summary(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def references(tmp_path_factory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("ref")
    info = _summary(_run(tmp, "ref.npz", 100, 0, "none"))
    assert info["final_step"] == 60 and info["resumed_from_step"] is None
    assert info["draws_collected"] == 30
    _summary(_run(tmp, "numpyro.npz", 1, 0, "numpyro"))
    return tmp / "ref.npz", tmp / "numpyro.npz"


def _same(a: Path, b: Path) -> None:
    ra, rb = np.load(a), np.load(b)
    assert sorted(ra.files) == sorted(rb.files)
    for key in ra.files:
        assert ra[key].tobytes() == rb[key].tobytes(), key


def test_uninterrupted_run_equals_mcmc_run(references) -> None:
    _same(*references)


@pytest.mark.parametrize(
    ("steps_per_call", "kill_at", "hook"),
    [
        (4, 25, "step"),  # in warmup, between checkpoints (25 is a logging event)
        (7, 40, "checkpoint"),  # in sampling, right after a checkpoint with draws in it
    ],
)
def test_sigkill_then_rerun_gives_the_same_draws(
    tmp_path: Path, references, steps_per_call: int, kill_at: int, hook: str
) -> None:
    ref, numpyro_ref = references
    killed = _run(tmp_path, "out.npz", steps_per_call, kill_at, hook)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= kill_at
    info = _summary(_run(tmp_path, "out.npz", steps_per_call, 0, "none"))
    assert info["resumed_from_step"] == max(committed) and info["final_step"] == 60
    _same(ref, tmp_path / "out.npz")
    _same(numpyro_ref, tmp_path / "out.npz")


def test_sigterm_checkpoints_the_step_and_the_rerun_finishes_the_same(
    tmp_path: Path, references
) -> None:
    ref, _ = references
    stopped = _summary(_run(tmp_path, "out.npz", 3, 45, "sigterm"))  # exit 0, no traceback
    assert stopped["interrupted"] == "SIGTERM" and stopped["final_step"] == 45
    assert stopped["draws_collected"] == 15
    assert (tmp_path / "ckpt" / "45").is_dir()
    info = _summary(_run(tmp_path, "out.npz", 3, 0, "none"))
    assert info["resumed_from_step"] == 45
    _same(ref, tmp_path / "out.npz")
