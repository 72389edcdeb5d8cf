"""``examples/digits_keras.yaml`` runs through the CLI and reaches ≥ 0.96 test accuracy.

The README's command as it is (1500 steps), a real subprocess in a temporary folder,
with ``KERAS_BACKEND`` unset as a user would have it. The held-out split is the one of
``examples/digits_mlp.yaml``; the same trained model loads back from ``--save``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pipekit_train import TrainingLoop

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits_keras.yaml"


def test_example_loop_matches_the_equinox_example() -> None:
    ours = TrainingLoop.from_yaml(str(EXAMPLE)).to_dict()
    ref = TrainingLoop.from_yaml(str(EXAMPLE.with_name("digits_mlp.yaml"))).to_dict()
    assert ours["backend"] == "keras"
    same = ("loss", "batch_size", "max_steps", "optimizer_config", "eval_every_n_steps", "seed")
    assert {k: ours[k] for k in same} == {k: ref[k] for k in same}
    assert ours["model_op"]["kwargs"] == ref["model_op"]["kwargs"]


def test_cli_run_of_the_example_reaches_096(tmp_path: Path) -> None:
    info_json = tmp_path / "info.json"
    cmd = [
        sys.executable, "-m", "pipekit_train.cli", "run", str(EXAMPLE),
        "--set", f"checkpoint_dir={tmp_path / 'ckpt'}",
        "--set", f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "--no-progress", "--info-json", str(info_json), "--save", str(tmp_path / "model"),
        "--compilation-cache", "off",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env.update(JAX_PLATFORMS="cpu", HOME=str(tmp_path))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    info = json.loads(info_json.read_text())
    assert info["backend"] == "keras" and info["final_step"] == 1500
    assert info["final_metrics"]["val_accuracy"] >= 0.96, info["final_metrics"]
    assert (tmp_path / "model" / "model.keras").is_file()
