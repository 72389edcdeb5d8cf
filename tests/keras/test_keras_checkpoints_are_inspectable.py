"""`pipekit-train inspect` reads a keras run's checkpoints as it reads the JAX backends'."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from _keras_helpers import digits, mlp

from pipekit_train import Checkpoint, TrainingLoop


def test_inspect_lists_every_step_with_its_fingerprint(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    TrainingLoop(
        model_op=mlp(hidden=8), dataset=digits(128), loss="cross_entropy", batch_size=32,
        max_steps=12, checkpoint_dir=str(ckpt), callbacks=[Checkpoint(every_n_steps=4)],
        backend="keras",
    ).run()  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "inspect", str(ckpt), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout.strip()
    rows = json.loads(text) if text.startswith("[") else [json.loads(x) for x in text.splitlines()]
    assert [r["step"] for r in rows] == [4, 8, 12]
    assert all(r["valid"] for r in rows)
    meta = rows[-1]["meta"]
    assert meta["fingerprint"]["backend"] == "keras"
    assert meta["data"]["position"] == 12
    assert meta["metrics"]["loss"] > 0
