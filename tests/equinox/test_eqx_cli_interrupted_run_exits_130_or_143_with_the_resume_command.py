"""An interrupted ``pipekit-train run`` checkpoints, prints the command that resumes it and exits
with the shell's code for the signal (130 for Ctrl-C, 143 for SIGTERM), so that
``pipekit-train run … && next_step`` does not carry on after an interrupted run; ``--save`` is
skipped (the model is not trained to the end). Real subprocesses, real signals."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
import time

import pytest
from _eqx_helpers import REPO, subprocess_env

EXAMPLE = REPO / "examples" / "digits_mlp.yaml"


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupted_run_exits_non_zero_and_says_how_to_resume(tmp_path, sig, code):
    ckpt, metrics = tmp_path / "ckpt", tmp_path / "m.jsonl"
    overrides = [
        "max_steps=200000",
        "eval_every_n_steps=100000",
        "log_every_n_steps=20",
        f"checkpoint_dir={ckpt}",
        f"metric_writer.path={metrics}",
    ]
    cmd = [sys.executable, "-m", "pipekit_train.cli", "run", str(EXAMPLE), "--no-progress"]
    for o in overrides:
        cmd += ["--set", o]
    cmd += ["--save", str(tmp_path / "op")]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path
    )
    deadline = time.monotonic() + 240
    while not (metrics.exists() and metrics.read_text().count("\n") >= 1):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the run logged nothing in time"
        time.sleep(0.2)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=240)

    assert proc.returncode == code, out + err
    name = signal.Signals(sig).name
    assert f"stopped by {name} at step" in err, err
    stopped = int(err.split(f"stopped by {name} at step ")[1].split(";")[0])
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit())[-1] == stopped
    assert f"checkpoint of step {stopped} saved in {ckpt}" in err
    resume = next(line for line in err.splitlines() if "resume with: " in line)
    words = shlex.split(resume.split("resume with: ", 1)[1])
    assert words[:3] == ["pipekit-train", "run", str(EXAMPLE)]
    assert [w for w in words if "=" in w] == overrides  # the same --set overrides, in order
    assert "--save" in err and "skipped" in err and not (tmp_path / "op").exists()
