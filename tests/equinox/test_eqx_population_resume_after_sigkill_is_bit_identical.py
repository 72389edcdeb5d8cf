"""A population SIGKILLed right after a checkpoint resumes to the bits of an uninterrupted one.

Real subprocesses and a real SIGKILL (``_population_worker.py``): three members, two
seeds (per-member batches and dropout keys), fused steps. The killed population, run
again, restores the one Orbax checkpoint of the stacked carry and every member's data
position; its final checkpoint (the whole stacked carry), every member's weights and
every per-member loss it logged after the resume equal the uninterrupted run's, bit for
bit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).with_name("_population_worker.py")


def _run(tmp: Path, name: str, out: str, kill_at: int, cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, PIPEKIT_TEST_JAX_CACHE=str(cache))
    return subprocess.run(
        [sys.executable, str(WORKER), str(tmp / name), str(tmp / out), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _summary(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_killed_population_resumes_bit_identically(tmp_path: Path) -> None:
    cache = tmp_path / "jax_cache"
    reference = _summary(_run(tmp_path, "ref", "ref.npz", 0, cache))
    assert reference == {"resumed_from_step": None, "final_step": 30, "batches": "per-member"}

    killed = _run(tmp_path, "ckpt", "out.npz", 20, cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    assert committed and max(committed) <= 20

    resumed = _summary(_run(tmp_path, "ckpt", "out.npz", 0, cache))
    assert resumed["resumed_from_step"] in committed and resumed["final_step"] == 30

    ref, got = np.load(tmp_path / "ref.npz"), np.load(tmp_path / "out.npz")
    keys = [k for k in ref.files if k.startswith(("carry_", "param_"))]
    assert keys and sorted(keys) == sorted(
        k for k in got.files if k.startswith(("carry_", "param_"))
    )
    for key in keys:
        assert got[key].tobytes() == ref[key].tobytes(), key
    ref_losses = dict(zip(ref["loss_names"].tolist(), ref["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_names"].tolist(), got["losses"].tolist(), strict=True))
    after = {n for n in got_losses if int(n.split("@")[1]) > resumed["resumed_from_step"]}
    assert after and {n.split("@")[0] for n in after} == {f"loss/member_{i}" for i in range(3)}
    for name in after:
        assert got_losses[name] == ref_losses[name], name
