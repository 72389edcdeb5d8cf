"""``examples/digits_mlp.yaml`` loads with ``from_yaml`` and runs through the CLI.

The CLI run is a real subprocess (``python -m pipekit_train.cli``) with the
README's command shortened by ``--set max_steps=20`` and pointed at temporary
folders; it must exit 0 and print the final val_dataset accuracy. The full-length run
(the README's main command as it is) must reach a val_dataset accuracy of at least 0.97.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from _eqx_helpers import REPO, read_jsonl, subprocess_env

from pipekit_train import Checkpoint, TrainingLoop

EXAMPLE = REPO / "examples" / "digits_mlp.yaml"


def test_from_yaml_builds_the_example_loop():
    loop = TrainingLoop.from_yaml(str(EXAMPLE))
    assert loop.backend == "equinox"
    assert loop.loss == "cross_entropy"
    assert loop.batch_size == 128 and loop.max_steps == 1500
    assert loop.optimizer_config["name"] == "adamw"
    assert loop.optimizer_config["lr"]["schedule"] == "cosine_decay"
    assert isinstance(loop.callbacks[0], Checkpoint) and loop.callbacks[0].keep_last == 2
    # The model and data are factory references, resolved only when the loop runs.
    assert loop.to_dict()["model_op"]["factory"] == "digits_mlp:make_model"


def test_cli_run_of_the_example(tmp_path):
    ckpt, metrics, info_json = tmp_path / "ckpt", tmp_path / "m.jsonl", tmp_path / "info.json"
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
        f"metric_writer.path={metrics}",
        "--no-progress",
        "--info-json",
        str(info_json),
    ]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "val_accuracy (on val_dataset):" in proc.stdout, proc.stdout
    accuracy = float(proc.stdout.split("val_accuracy (on val_dataset):")[1].split()[0])
    assert 0.0 <= accuracy <= 1.0

    info = json.loads(info_json.read_text())
    assert info["final_step"] == 20 and info["resumed_from_step"] is None
    assert info["final_metrics"]["val_accuracy"] == pytest.approx(accuracy, abs=1e-4)
    rows = read_jsonl(metrics)
    assert [r["step"] for r in rows if "val_accuracy" in r] == [20]
    assert (ckpt / "20").is_dir()  # the final step is checkpointed
    # Nothing was written next to the example or into the working directory's runs/.
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    "override, fragments",
    [
        ("max_steps=0", ["max_steps must be a positive integer", "--set max_steps=VALUE"]),
        ("optimizer_config.lr.warmup_steps=5", ["optimizer_config.lr", "warmup_steps"]),
        ("max_step=20", ["'max_step'", "did you mean 'max_steps'"]),
    ],
    ids=["zero-steps", "field-the-schedule-does-not-take", "typo"],
)
def test_cli_reports_a_bad_override_as_a_clean_error(tmp_path, override, fragments):
    cmd = [
        sys.executable,
        "-m",
        "pipekit_train.cli",
        "run",
        str(EXAMPLE),
        "--set",
        override,
        "--no-progress",
    ]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=subprocess_env(), cwd=tmp_path, timeout=120
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "ConfigError" in proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "runs").exists()  # failed before creating anything


def test_readme_main_command_reaches_097_test_accuracy(tmp_path):
    """The README's main job, unshortened: digits MLP to >= 0.97 test accuracy."""
    cmd = [
        sys.executable,
        "-m",
        "pipekit_train.cli",
        "run",
        str(EXAMPLE),
        "--set",
        f"checkpoint_dir={tmp_path / 'ckpt'}",
        "--set",
        f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "--no-progress",
    ]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    accuracy = float(proc.stdout.split("val_accuracy (on val_dataset):")[1].split()[0])
    assert accuracy >= 0.97, proc.stdout
