"""Runs ``_resume_worker.py`` in a subprocess; the uninterrupted reference run is shared."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

WORKER = Path(__file__).with_name("_resume_worker.py")


def run_worker(
    ckpt: Path,
    out: Path,
    workers: int,
    kill_at: int = 0,
    sig: str = "SIGKILL",
    env: dict[str, str] | None = None,
) -> int:
    """Run the job (``env``: extra environment variables); one not SIGKILLed must exit 0."""
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(ckpt), str(out), str(workers), str(kill_at), sig],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )
    if kill_at == 0 or sig != "SIGKILL":
        assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.returncode


@pytest.fixture(scope="session")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, np.ndarray]:
    """The uninterrupted 40-step run's final arrays and losses."""
    d = tmp_path_factory.mktemp("ref")
    run_worker(d / "ckpt", d / "ref.npz", workers=0)
    return dict(np.load(d / "ref.npz"))
