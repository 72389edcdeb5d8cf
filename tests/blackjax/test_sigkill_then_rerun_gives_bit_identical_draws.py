"""SIGKILL a blackjax run (real subprocess, real signal, real Orbax checkpoints), run it again:
the draws are bit-identical to an uninterrupted run — NUTS killed during window adaptation
and during sampling, MCLMC after its tuning step, SGLD mid-sampling (its minibatch stream
resumes from the checkpoint), SMC among its tempering steps and SVGD among its particle
updates. The killed and resumed runs also use another chunk size than
the reference, so the chunking does not change the bits either."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _bjx_helpers import compilation_cache_dir

HERE = Path(__file__).parent
WORKER = HERE / "_resume_worker.py"
TOTAL = {"nuts": 60, "mclmc": 32, "sgld": 50, "smc": 43, "svgd": 60}


def _worker(*args: str):
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(HERE),
        PIPEKIT_BJX_CACHE=compilation_cache_dir(),
    )
    return subprocess.run(
        [sys.executable, str(WORKER), *args], capture_output=True, text=True, timeout=600, env=env
    )


def _run(tmp: Path, out: str, sampler: str, k: int, kill_at: int, hook: str):
    return _worker(str(tmp / "ckpt"), str(tmp / out), sampler, str(k), str(kill_at), hook)


def _summary(proc) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def references(tmp_path_factory):
    """Every sampler's uninterrupted run, one after another in one worker process (a process
    start each cost ~5 s of the module's setup); the killed runs each get their own."""
    folder = tmp_path_factory.mktemp("references")
    proc = _worker("--references", str(folder), "10", *TOTAL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [json.loads(line) for line in proc.stdout.strip().splitlines()[-len(TOTAL) :]]
    refs = {}
    for sampler, info in zip(TOTAL, lines, strict=True):
        assert info["sampler"] == sampler
        assert info["final_step"] == TOTAL[sampler] and info["resumed_from_step"] is None
        assert info["draws_collected"] == 30
        refs[sampler] = folder / sampler / "ref.npz"
    return refs


@pytest.mark.parametrize(
    ("sampler", "steps_per_call", "kill_at", "hook"),
    [
        ("nuts", 4, 25, "step"),  # in window adaptation, between checkpoints
        ("nuts", 7, 40, "checkpoint"),  # in sampling, right after a checkpoint with draws
        ("mclmc", 3, 15, "step"),  # after the start and tuning steps, mid-sampling
        ("sgld", 7, 35, "step"),  # mid-sampling, minibatch stream restored
        ("smc", 3, 10, "step"),  # resumed from step 4 or 8, among the tempering steps
        ("svgd", 7, 25, "step"),  # resumed from step 10 or 20, among the particle updates
    ],
)
def test_sigkill_then_rerun_gives_the_same_draws(
    tmp_path: Path, references, sampler: str, steps_per_call: int, kill_at: int, hook: str
) -> None:
    killed = _run(tmp_path, "out.npz", sampler, steps_per_call, kill_at, hook)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= kill_at
    info = _summary(_run(tmp_path, "out.npz", sampler, steps_per_call, 0, "none"))
    assert info["resumed_from_step"] == max(committed) and info["final_step"] == TOTAL[sampler]
    ref, got = np.load(references[sampler]), np.load(tmp_path / "out.npz")
    assert sorted(ref.files) == sorted(got.files)
    for key in ref.files:
        assert ref[key].tobytes() == got[key].tobytes(), key
