"""Issue 20: the model the user compile()d (SGD + momentum on an ExponentialDecay schedule,
its own loss and metric) is SIGKILLed right after the checkpoint of step 40 was handed to
the writer; the rerun resumes and ends bit-identical to an uninterrupted run: every model
variable, every optimiser variable of the user's SGD (momentum, iterations), each step's
loss, and each step's row of the compiled ``accuracy`` metric (its running state is
checkpointed, so its curve does not restart at the resume); the evaluation after the resume
reports ``val_accuracy`` for that metric, equal to the uninterrupted run's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

WORKER = Path(__file__).with_name("_keras_resume_worker.py")
ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", PIPEKIT_TEST_OWN="1")


def _run(ckpt: Path, out: Path, mode: str = "run", at: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(WORKER), str(ckpt), str(out), mode, str(at)],
        capture_output=True,
        text=True,
        timeout=300,
        env=ENV,
    )


def test_compiled_model_sigkill_then_resume_is_bit_identical(tmp_path: Path) -> None:
    ref = _run(tmp_path / "ref", tmp_path / "ref.npz")
    assert ref.returncode == 0, ref.stderr[-3000:]
    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    killed = _run(ckpt, out, "kill-after-checkpoint", 40)
    assert killed.returncode == -signal.SIGKILL and not out.exists()
    again = _run(ckpt, out)
    assert again.returncode == 0, again.stderr[-3000:]
    info = json.loads(again.stdout.strip().splitlines()[-1])
    assert info["resumed_from_step"] in (20, 40) and info["final_step"] == 80
    a, b = np.load(tmp_path / "ref.npz"), np.load(out)
    arrays = [k for k in a.files if k.startswith("arr_")]
    assert arrays and sorted(arrays) == sorted(k for k in b.files if k.startswith("arr_"))
    for key in arrays:
        assert a[key].tobytes() == b[key].tobytes(), key
    ref_losses = dict(zip(a["loss_steps"].tolist(), a["losses"].tolist(), strict=True))
    for step, loss in zip(b["loss_steps"].tolist(), b["losses"].tolist(), strict=True):
        assert loss == ref_losses[step], f"loss differs at step {step}"
    assert "accuracy" in info["final_metrics"]
    ref_acc = dict(zip(a["accuracy_steps"].tolist(), a["accuracies"].tolist(), strict=True))
    assert len(b["accuracy_steps"]) >= 8  # the rows after the resume
    for step, acc in zip(b["accuracy_steps"].tolist(), b["accuracies"].tolist(), strict=True):
        assert acc == ref_acc[step], f"accuracy row differs at step {step}"
    ref_info = json.loads(ref.stdout.strip().splitlines()[-1])
    assert set(info["evals"]["80"]) == {"val_loss", "val_accuracy"}
    assert info["evals"]["80"] == ref_info["evals"]["80"]
