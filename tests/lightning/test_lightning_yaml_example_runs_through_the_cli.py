"""``pipekit-train run examples/digits_lightning.yaml`` trains on Lightning through the CLI.

A shorter run (``--set max_steps=300``) in a scratch folder: exit status 0, the summary
names the backend and the accuracy on ``val_dataset``, checkpoints land under the YAML's
relative ``checkpoint_dir``. The CLI passes JAX's compilation cache only to backends
that run on JAX, so Lightning does not refuse it as an unknown Trainer option.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "digits_lightning.yaml"


def test_yaml_example_runs_through_the_cli(tmp_path: Path) -> None:
    cli = Path(sys.executable).with_name("pipekit-train")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [
            str(cli),
            "run",
            str(EXAMPLE),
            "--no-progress",
            "--set",
            "max_steps=300",
            "--set",
            "eval_every_n_steps=300",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "backend: lightning  final_step: 300" in out
    accuracy = float(re.search(r"val_accuracy \(on val_dataset\): ([0-9.]+)", out).group(1))
    assert accuracy > 0.9
    ckpts = sorted(p.name for p in (tmp_path / "runs/digits_lightning/checkpoints").glob("*.pt"))
    assert ckpts == ["step-000000300.pt"]
