"""SIGKILL during warmup or during sampling → rerun → the same carry and trace, bit for bit.

A real subprocess, real Orbax checkpoints (every 5 steps, and at the phase end),
a real SIGKILL. The trace of draws lives in the same atomic commit as the state,
so a resumed run's trace is the uninterrupted run's.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from _ckpt_helpers import child_env

WORKER = str(Path(__file__).with_name("_program_worker.py"))


def _run(ckpt: Path, out: Path, kill_at: int | None = None) -> list[str]:
    child = subprocess.Popen(
        [sys.executable, WORKER, str(ckpt), str(out)] + ([str(kill_at)] if kill_at else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=child_env(JAX_PLATFORMS="cpu"),
    )
    lines = []
    assert child.stdout is not None
    for line in child.stdout:
        lines.append(line.strip())
        if kill_at is not None and line.startswith("STEP") and int(line.split()[1]) == kill_at:
            child.send_signal(signal.SIGKILL)
            break
    child.wait(timeout=120)
    if kill_at is None:
        assert child.returncode == 0, lines
    else:
        assert child.returncode == -signal.SIGKILL
    return lines


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    root = tmp_path_factory.mktemp("ref")
    _run(root / "ckpt", root / "ref.npz")
    return dict(np.load(root / "ref.npz"))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kill_at", "phase", "resume_step"), [(8, "warmup", 5), (27, "sampling", 25)]
)
def test_kill_and_resume(tmp_path, reference, kill_at, phase, resume_step):
    lines = _run(tmp_path / "ckpt", tmp_path / "out.npz", kill_at=kill_at)
    assert any(line.endswith(phase) for line in lines if line.startswith("STEP"))
    assert not (tmp_path / "out.npz").exists()
    lines = _run(tmp_path / "ckpt", tmp_path / "out.npz")
    assert lines[-1] == f"DONE {resume_step}"
    # the resumed run starts at the checkpoint's phase
    first = next(line for line in lines if line.startswith("STEP"))
    assert first.split()[2] == phase
    resumed = dict(np.load(tmp_path / "out.npz"))
    assert resumed["trace"].shape == (30, 4, 3)
    for name, value in reference.items():
        np.testing.assert_array_equal(resumed[name], value, err_msg=name)
