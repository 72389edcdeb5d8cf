"""Running the CLI again on a checkpoint that is already at `max_steps` runs no step and says
so ("run already complete at step N in DIR", with the final metrics), exit code 0, instead of
printing a summary that looks like a normal run."""

from __future__ import annotations

import subprocess
import sys

from _eqx_helpers import REPO, subprocess_env

EXAMPLE = REPO / "examples" / "digits_mlp.yaml"


def test_second_run_reports_the_run_already_complete(tmp_path):
    ckpt = tmp_path / "ckpt"
    cmd = [
        sys.executable,
        "-m",
        "pipekit_train.cli",
        "run",
        str(EXAMPLE),
        "--set",
        "max_steps=20",
        "--set",
        f"checkpoint_dir={ckpt}",
        "--set",
        f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "--no-progress",
    ]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    runs = [
        subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        for _ in range(2)
    ]
    first, second = runs
    assert first.returncode == 0, first.stdout + first.stderr
    assert "already complete" not in first.stdout
    assert second.returncode == 0, second.stdout + second.stderr
    assert f"run already complete at step 20 in {ckpt}" in second.stdout, second.stdout
    assert "val_accuracy=" in second.stdout
