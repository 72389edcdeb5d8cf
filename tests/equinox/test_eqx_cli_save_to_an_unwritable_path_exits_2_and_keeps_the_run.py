"""`pipekit-train run --save PATH` where PATH cannot be written (a file stands where its parent
folder should be): the run trains to the end, then the CLI exits 2 with one error line naming
the path, the OS error and the kept checkpoint (no traceback). The rerun with a writable
``--save`` trains nothing ("run already complete at step 20") and writes the op there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from _eqx_helpers import REPO, subprocess_env

EXAMPLE = REPO / "examples" / "digits_mlp.yaml"


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pipekit_train.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_an_unwritable_save_path_is_one_error_line_and_the_rerun_saves(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    run = [
        "run",
        str(EXAMPLE),
        "--set",
        "max_steps=20",
        "--set",
        f"checkpoint_dir={ckpt}",
        "--set",
        "callbacks=[{Checkpoint: {every_n_steps: 10}}]",
        "--set",
        f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "--no-progress",
    ]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"))
    blocker = tmp_path / "exports"
    blocker.write_text("a file, not a folder")
    first = _cli([*run, "--save", str(blocker / "model")], env, tmp_path)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "Traceback" not in first.stderr, first.stderr
    line = next(x for x in first.stderr.splitlines() if "pipekit-train: error:" in x)
    assert f"could not save the trained model to {blocker / 'model'}" in line, line
    assert "Error" in line and f"final checkpoint is kept in {ckpt}" in line, line
    assert blocker.read_text() == "a file, not a folder"  # nothing the user had is touched
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [10, 20]

    saved = tmp_path / "model"
    again = _cli([*run, "--save", str(saved)], env, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "run already complete at step 20" in again.stdout, again.stdout
    assert f"saved trained model to {saved}" in again.stdout
    assert (saved / "op.json").is_file() or any(saved.iterdir())
