"""SIGKILL mid-epoch, run the job again: it resumes and ends bit-identical.

Real subprocesses and real signals. The reference trains 80 steps in one go. A
second run is SIGKILLed by its parent at whatever moment it has passed step 35 (in
the middle of Keras' epoch, between checkpoints, not at a host event); running the same
job again resumes from the newest committed checkpoint. Every model variable (the
dropout ``SeedGenerator`` state included), every optimiser variable, and the loss of
every step run after the resume must equal the reference's bit for bit — the losses
only match if the data order and the dropout stream match too. The first Ctrl-C
checkpoints the step it arrives at and returns normally. A kill at a host event or right
after an asynchronous checkpoint, and SIGTERM, are the contract kit's checks
(``test_keras_passes_the_backend_contract.py``).
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

WORKER = Path(__file__).with_name("_keras_resume_worker.py")
ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")


def _cmd(ckpt: Path, out: Path, mode: str, at: int = 0) -> list[str]:
    return [sys.executable, str(WORKER), str(ckpt), str(out), mode, str(at)]


def _run(ckpt: Path, out: Path, mode: str = "run", at: int = 0) -> subprocess.CompletedProcess:
    return subprocess.run(
        _cmd(ckpt, out, mode, at), capture_output=True, text=True, timeout=300, env=ENV
    )


def _info(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _committed(ckpt: Path) -> list[int]:
    if not ckpt.is_dir():
        return []
    return sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("reference")
    info = _info(_run(tmp / "ckpt", tmp / "ref.npz"))
    assert info["resumed_from_step"] is None and info["final_step"] == 80
    return tmp / "ref.npz"


def _assert_same_bits(ref_path: Path, got_path: Path, resumed_from: int) -> None:
    ref, got = np.load(ref_path), np.load(got_path)
    arrays = [k for k in ref.files if k.startswith("arr_")]
    assert arrays and sorted(arrays) == sorted(k for k in got.files if k.startswith("arr_"))
    for key in arrays:
        assert got[key].tobytes() == ref[key].tobytes(), key
    ref_losses = dict(zip(ref["loss_steps"].tolist(), ref["losses"].tolist(), strict=True))
    got_losses = dict(zip(got["loss_steps"].tolist(), got["losses"].tolist(), strict=True))
    assert sorted(got_losses) == list(range(resumed_from + 1, 81))
    for step, loss in got_losses.items():
        assert loss == ref_losses[step], f"loss differs at step {step}"


def test_sigkill_at_any_moment_mid_epoch_then_rerun_matches(tmp_path: Path, reference) -> None:
    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    proc = subprocess.Popen(
        _cmd(ckpt, out, "run"),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**ENV, "PIPEKIT_TEST_EVENT_SLEEP": "0.15", "PIPEKIT_TEST_WAIT_COMMIT": "1"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        # past step 35 and with a committed checkpoint (the first async save takes a while)
        if line.startswith("step ") and int(line.split()[1]) >= 35 and _committed(ckpt):
            proc.send_signal(signal.SIGKILL)  # wherever the child is now: mid-epoch
            break
    assert proc.wait(timeout=60) == -signal.SIGKILL
    assert not out.exists()
    committed = _committed(ckpt)
    assert committed and max(committed) < 80

    info = _info(_run(ckpt, out))
    assert info["resumed_from_step"] == max(committed)
    assert info["final_step"] == 80
    _assert_same_bits(reference, out, info["resumed_from_step"])


@pytest.mark.parametrize("mode", ["sigint"])
def test_first_ctrl_c_checkpoints_and_stops_cleanly(tmp_path: Path, reference, mode: str) -> None:
    ckpt, out = tmp_path / "ckpt", tmp_path / "out.npz"
    stopped = _info(_run(ckpt, out, mode, 35))  # exit code 0, no traceback
    assert stopped["interrupted"] == mode.upper()
    assert stopped["final_step"] == 35
    assert 35 in _committed(ckpt), "the signal must checkpoint the step it stopped at"

    resumed = _info(_run(ckpt, tmp_path / "out2.npz"))
    assert resumed["resumed_from_step"] == 35
    _assert_same_bits(reference, tmp_path / "out2.npz", 35)
