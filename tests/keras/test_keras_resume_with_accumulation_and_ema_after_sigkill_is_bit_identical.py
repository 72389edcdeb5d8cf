"""SIGKILL a Keras run with ``accumulate_steps=2`` and ``ema_decay``; the rerun ends bit-identical.

The same worker as ``test_keras_resume_after_sigkill_is_bit_identical.py`` with
``PIPEKIT_TEST_FEATURES=1``: Keras sees two micro-batches per optimiser update and the
parent kills the child wherever it is past step 35; checkpoints are only written at
update boundaries (the gradient accumulators are zero there), so the one resumed from
holds no half-accumulated gradient. The
rerun resumes from the newest committed update and must reproduce, bit for bit, every
model variable (the EMA-finalised weights), every optimiser variable (moments,
accumulators, the EMA averages, Keras' micro-batch counter) and the per-update loss of
every step it ran, against an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).with_name("_keras_resume_worker.py")
ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", PIPEKIT_TEST_FEATURES="1")


def _cmd(ckpt: Path, out: Path) -> list[str]:
    return [sys.executable, str(WORKER), str(ckpt), str(out), "run", "0"]


def _info(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _committed(ckpt: Path) -> list[int]:
    if not ckpt.is_dir():
        return []
    return sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit())


def _run(ckpt: Path, out: Path) -> dict:
    return _info(
        subprocess.run(_cmd(ckpt, out), capture_output=True, text=True, timeout=300, env=ENV)
    )


def test_sigkill_mid_accumulation_then_rerun_matches_the_uninterrupted_run(tmp_path: Path) -> None:
    ref_info = _run(tmp_path / "ref-ckpt", tmp_path / "ref.npz")
    assert ref_info["final_step"] == 80

    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    proc = subprocess.Popen(
        _cmd(ckpt, out),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "PIPEKIT_TEST_EVENT_SLEEP": "0.15", "PIPEKIT_TEST_WAIT_COMMIT": "1"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("step ") and int(line.split()[1]) >= 35 and _committed(ckpt):
            proc.send_signal(signal.SIGKILL)
            break
    assert proc.wait(timeout=60) == -signal.SIGKILL
    committed = _committed(ckpt)
    assert committed and max(committed) < 80

    info = _run(ckpt, out)
    assert info["resumed_from_step"] == max(committed) and info["final_step"] == 80
    ref, got = np.load(tmp_path / "ref.npz"), np.load(out)
    arrays = sorted(k for k in ref.files if k.startswith("arr_"))
    assert arrays == sorted(k for k in got.files if k.startswith("arr_"))
    for key in arrays:
        assert got[key].tobytes() == ref[key].tobytes(), key
    ref_losses = dict(zip(ref["loss_steps"].tolist(), ref["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_steps"].tolist(), got["losses"].tolist(), strict=True))
    assert sorted(got_losses) == list(range(info["resumed_from_step"] + 1, 81))
    for step, loss in got_losses.items():
        assert loss == ref_losses[step], f"loss differs at step {step}"
