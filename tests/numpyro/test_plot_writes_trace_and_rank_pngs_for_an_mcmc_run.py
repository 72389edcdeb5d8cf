"""``pipekit-train plot`` on a numpyro-mcmc run folder writes ArviZ trace and rank PNGs (from the
draws in its newest checkpoint) beside the metric curves, and the posterior-predictive check
renders from the trained op. The PNGs are real images: not tiny, not blank."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import matplotlib.image
import numpy as np
import pytest
from _npy_helpers import pdb

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask, plot_posterior_predictive

NAME = "eight_schools-eight_schools_noncentered"


def _assert_real_png(path: Path) -> None:
    assert path.is_file() and path.stat().st_size > 10_000, path
    pixels = matplotlib.image.imread(path)
    assert pixels.std() > 0.01, f"{path} looks blank"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    root = tmp_path_factory.mktemp("mcmc")
    x, y = (a.astype(np.float32) for a in pdb.load_data(NAME))
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=60, num_samples=60, num_chains=2),
        dataset=(x, y),
        backend="numpyro-mcmc",
        checkpoint_dir=str(root / "run"),
        callbacks=[Checkpoint(every_n_steps=30)],
        metric_writer="jsonl",
        log_every_n_steps=10,
    )
    with pytest.warns(UserWarning):  # so few draws: the diagnostics warn
        op, _ = loop.run()
    return root / "run", op, x, y


def test_cli_plot_writes_trace_and_rank(run):
    run_dir, _, _, _ = run
    proc = subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "plot", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    for name in ("trace.png", "rank.png", "metrics.png"):
        _assert_real_png(run_dir / "plots" / name)


def test_posterior_predictive_plot(run, tmp_path):
    _, op, x, y = run
    path = plot_posterior_predictive(op, x, y, tmp_path / "ppc.png")
    _assert_real_png(path)
