"""blackjax's sgld samples on the user's own ``grain.IterDataset`` and, SIGKILLed mid-sampling
and run again, gives draws bit-identical to an uninterrupted run (issue 20).

The stream yields ``(x, y)`` examples (shuffled and repeated by Grain); pipekit batches them
and BlackJAX's gradient estimator scales each minibatch by the declared
``backend_options.num_data``. Grain's iterator state is saved in the same checkpoint commit as
the chains, so the rerun continues the stream where the checkpoint left it. Real
subprocesses (``_resume_worker.py``), a real SIGKILL, real Orbax checkpoints; the killed and
resumed runs use another chunk size than the reference.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
from _bjx_helpers import compilation_cache_dir, regression_data, regression_posterior

HERE = Path(__file__).parent
WORKER = HERE / "_resume_worker.py"
TOTAL, KILL_AT = 50, 35  # 20 burn-in + 30 draws; killed mid-sampling, between checkpoints


def _run(tmp: Path, out: str, k: int, kill_at: int) -> subprocess.CompletedProcess[str]:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(HERE),
        PIPEKIT_BJX_CACHE=compilation_cache_dir(),
    )
    args = [str(tmp / "ckpt"), str(tmp / out), "sgld-stream", str(k), str(kill_at), "step"]
    return subprocess.run(
        [sys.executable, str(WORKER), *args], capture_output=True, text=True, timeout=600, env=env
    )


def _summary(proc: subprocess.CompletedProcess[str]) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    result: dict = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_sgld_on_an_iter_dataset_sigkill_then_rerun_gives_the_same_draws(tmp_path: Path) -> None:
    ref_dir, run_dir = tmp_path / "ref", tmp_path / "run"
    ref = _summary(_run(ref_dir, "ref.npz", 10, 0))
    assert ref["final_step"] == TOTAL and ref["resumed_from_step"] is None
    assert ref["draws_collected"] == 30

    killed = _run(run_dir, "out.npz", 7, KILL_AT)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (run_dir / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= KILL_AT

    info = _summary(_run(run_dir, "out.npz", 7, 0))
    assert info["resumed_from_step"] == max(committed) and info["final_step"] == TOTAL
    want, got = np.load(ref_dir / "ref.npz"), np.load(run_dir / "out.npz")
    assert sorted(want.files) == sorted(got.files) == ["position"]
    assert want["position"].tobytes() == got["position"].tobytes()
    # The draws are of the regression posterior, scaled by num_data (a wrong N would put
    # them far from it): within 6 sds of the analytic posterior mean.
    mean, sd = regression_posterior(*regression_data())
    draws = got["position"].reshape(-1, 2)
    assert np.all(np.abs(draws.mean(0) - mean) < 6 * sd + 0.1), (draws.mean(0), mean, sd)
