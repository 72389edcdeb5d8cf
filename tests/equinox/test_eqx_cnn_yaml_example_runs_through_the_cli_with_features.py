"""``examples/digits_cnn.yaml`` loads, and runs through the CLI with the feature fields set.

A real ``python -m pipekit_train.cli run`` subprocess, shortened to 20 steps, with
``--set accumulate_steps=2 --set ema_decay=0.9 --set precision=mixed-bfloat16``:
it exits 0, ``backend_info`` records the features, and a bad feature value is a
clean ``ConfigError`` (exit 2) naming the field before anything runs.
"""

from __future__ import annotations

import json
import subprocess
import sys

from _eqx_helpers import REPO, subprocess_env

from pipekit_train import TrainingLoop

EXAMPLE = REPO / "examples" / "digits_cnn.yaml"


def test_from_yaml_builds_the_cnn_loop_with_default_features():
    loop = TrainingLoop.from_yaml(str(EXAMPLE))
    assert loop.to_dict()["model_op"]["factory"] == "digits_cnn:make_model"
    assert (loop.accumulate_steps, loop.ema_decay, loop.precision) == (1, None, "float32")


def _cli(tmp_path, *sets: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pipekit_train.cli", "run", str(EXAMPLE), "--no-progress"]
    it = iter(sets)
    for item in it:
        cmd += [item, next(it)] if item.startswith("--") else ["--set", item]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)


def test_cli_run_with_accumulation_ema_and_mixed_precision(tmp_path):
    info_json = tmp_path / "info.json"
    proc = _cli(
        tmp_path,
        "max_steps=20",
        "eval_every_n_steps=20",
        f"checkpoint_dir={tmp_path / 'ckpt'}",
        f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "accumulate_steps=2",
        "ema_decay=0.9",
        "precision=mixed-bfloat16",
        "--info-json",
        str(info_json),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    info = json.loads(info_json.read_text())
    assert info["final_step"] == 20
    assert info["features"] == {
        "stateful_model": True,
        "accumulate_steps": 2,
        "ema_decay": 0.9,
        "precision": "mixed-bfloat16",
    }
    assert 0.0 <= info["final_metrics"]["val_accuracy"] <= 1.0
    assert (tmp_path / "ckpt" / "20").is_dir()


def test_cli_bad_precision_is_a_clean_config_error(tmp_path):
    proc = _cli(tmp_path, "precision=fp16")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "ConfigError" in proc.stderr and "precision" in proc.stderr
    assert "Traceback" not in proc.stderr
