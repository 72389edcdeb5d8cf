"""The README's BlackJAX example runs as a user runs it: ``pipekit-train run
examples/eight_schools.yaml --set backend=blackjax`` (fewer draws), and the operator it saved
loads back in this process and draws posterior-predictive samples."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def test_eight_schools_on_blackjax_through_the_cli(tmp_path: Path) -> None:
    cmd = [
        sys.executable, "-m", "pipekit_train.cli", "run", str(EXAMPLES / "eight_schools.yaml"),
        "--set", "backend=blackjax", "--save", str(tmp_path / "op"),
        "--set", "task.kwargs.num_warmup=150", "--set", "task.kwargs.num_samples=150",
        "--set", "task.kwargs.num_chains=2",
    ]  # fmt: skip
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "backend: blackjax" in out
    assert "posterior (2 chain(s) × 150 draws" in out
    assert any(line.startswith("health: ") for line in out.splitlines())

    sys.path.insert(0, str(EXAMPLES))
    try:
        from eight_schools import model

        from pipekit_train.adapters.bayes import NumpyroPredictiveOp

        op = NumpyroPredictiveOp.load(tmp_path / "op", model=model)
    finally:
        sys.path.remove(str(EXAMPLES))
    mu = np.asarray(op.samples["mu"])
    assert mu.shape == (300,)  # 2 chains × 150 draws, pooled
    assert np.all(np.isfinite(mu)) and float(mu.std()) > 0
