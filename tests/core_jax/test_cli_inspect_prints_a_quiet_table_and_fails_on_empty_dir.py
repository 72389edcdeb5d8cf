"""`pipekit-train inspect DIR` prints a readable table (JSON with --json), prints no absl
WARNING lines for valid checkpoints, and exits non-zero naming what it expected when the
folder holds no checkpoint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _ckpt_helpers import FINGERPRINT, child_env, make_state

from pipekit_train.jax.checkpoint import Checkpointer


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", *args],
        capture_output=True,
        text=True,
        env=child_env(JAX_PLATFORMS="cpu"),
        timeout=120,
    )


@pytest.fixture
def ckpt_dir(tmp_path: Path) -> Path:
    with Checkpointer(tmp_path, keep_last=5, fingerprint=FINGERPRINT) as ck:
        for step in (1, 2):
            ck.save(step, make_state(float(step)), {"metrics": {"loss": 0.5}})
    return tmp_path


def test_table_by_default_without_absl_warnings(ckpt_dir: Path) -> None:
    result = _cli("inspect", str(ckpt_dir))
    assert result.returncode == 0, result.stderr
    assert "WARNING" not in result.stderr + result.stdout
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["step", "valid", "size"]
    assert [ln.split()[:2] for ln in lines[1:]] == [["1", "yes"], ["2", "yes"]]
    assert all("loss=0.5" in ln for ln in lines[1:])


def test_json_for_machines(ckpt_dir: Path) -> None:
    result = _cli("inspect", str(ckpt_dir), "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert [r["step"] for r in rows] == [1, 2] and all(r["valid"] for r in rows)


def test_folder_without_checkpoints_exits_non_zero_naming_what_was_expected(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("not a checkpoint")
    result = _cli("inspect", str(tmp_path))
    assert result.returncode != 0
    assert "no checkpoints in" in result.stderr and "step folders" in result.stderr
    assert "checkpoint_dir" in result.stderr
