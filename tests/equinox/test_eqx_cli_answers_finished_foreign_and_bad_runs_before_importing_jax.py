"""`pipekit-train run` answers what the config and the checkpoint's meta can tell before it
imports the backend, JAX or the user's factory module (issue 21, "answer before you
compile"): a finished run ("run already complete at step N", exit 0, `--info-json` with
`stop_reason`), a checkpoint of another run (the full path's `CheckpointError` naming the
field), a bad backend option (`ConfigError`).

Each answer runs in a child whose `sitecustomize` logs and refuses every import of a
framework (`tests/import_guard.py`). The controls prove the guard sees one: `--save` (it
needs the trained op), changed factory kwargs and an edited factory module all go to the
backend; without the guard the changed model is refused by the full path's resume guard.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _eqx_helpers import REPO, subprocess_env
from import_guard import guarded_env, imported

EXAMPLES = REPO / "examples"


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pipekit_train.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], dict[str, str]]:
    """A 20-step digits run, trained to the end once through the CLI."""
    folder = tmp_path_factory.mktemp("finished")
    for name in ("digits_mlp.yaml", "digits_mlp.py"):
        shutil.copy(EXAMPLES / name, folder / name)
    run = [
        "run",
        str(folder / "digits_mlp.yaml"),
        "--set",
        "max_steps=20",
        "--set",
        "eval_every_n_steps=10",
        "--set",
        f"checkpoint_dir={folder / 'ckpt'}",
        "--set",
        "callbacks=[{Checkpoint: {every_n_steps: 10}}]",
        "--set",
        f"metric_writer.path={folder / 'm.jsonl'}",
        "--no-progress",
    ]
    env = subprocess_env(PIPEKIT_TRAIN_COMPILATION_CACHE=str(folder / "jax-cache"))
    first = _cli(run, env, folder)
    assert first.returncode == 0, first.stdout + first.stderr
    return folder, run, env


def test_a_finished_run_is_answered_from_the_meta_without_importing_jax(finished, tmp_path):
    folder, run, env = finished
    info_json = tmp_path / "info.json"
    out = _cli([*run, "--info-json", str(info_json)], guarded_env(tmp_path / "g", env), folder)
    assert imported(tmp_path / "g") == [], out.stderr
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"run already complete at step 20 in {folder / 'ckpt'}" in out.stdout, out.stdout
    assert "val_accuracy=" in out.stdout
    info = json.loads(info_json.read_text())
    assert info["stop_reason"] == "already complete at step 20"
    assert info["final_step"] == info["resumed_from_step"] == 20
    assert 0.0 <= info["final_metrics"]["val_accuracy"] <= 1.0


def test_a_foreign_checkpoint_is_refused_by_field_without_importing_jax(finished, tmp_path):
    folder, run, env = finished
    out = _cli([*run, "--set", "seed=1"], guarded_env(tmp_path / "g", env), folder)
    assert imported(tmp_path / "g") == [], out.stderr
    assert out.returncode == 2, out.stdout + out.stderr
    assert "CheckpointError" in out.stderr
    assert "seed: checkpoint 0 != this run 1" in out.stderr
    assert "--set backend_options.resume=force" in out.stderr  # the CLI's spelling of the fix
    # max_steps sets the cosine schedule's length: a changed one is named as the full path does
    out = _cli([*run, "--set", "max_steps=40"], guarded_env(tmp_path / "h", env), folder)
    assert imported(tmp_path / "h") == [], out.stderr
    assert out.returncode == 2, out.stdout + out.stderr
    assert "max_steps: checkpoint 20 != this run 40" in out.stderr
    assert "optimizer_config.lr.decay_steps" in out.stderr


def test_a_bad_backend_option_is_refused_without_importing_jax(finished, tmp_path):
    folder, run, env = finished
    for bad, named in (
        ("backend_options.steps_per_call=0", "backend_options.steps_per_call must be"),
        ("backend_options.step_per_call=5", "did you mean 'steps_per_call'"),
        ("backend_options.resume=sometimes", "backend_options.resume must be one of"),
    ):
        guard = tmp_path / bad.split("=")[0]
        out = _cli([*run, "--set", bad], guarded_env(guard, env), folder)
        assert imported(guard) == [], out.stderr
        assert out.returncode == 2, out.stdout + out.stderr
        assert "ConfigError" in out.stderr and named in out.stderr, out.stderr


def test_the_guard_sees_a_run_that_needs_the_backend(finished, tmp_path):
    """The control: --save needs the trained op, so it goes to the backend (and the guard
    logs the import); the fast answers above are therefore not an artefact of the guard."""
    folder, run, env = finished
    out = _cli([*run, "--save", str(tmp_path / "op")], guarded_env(tmp_path / "g", env), folder)
    assert out.returncode != 0
    assert imported(tmp_path / "g"), out.stdout + out.stderr


def test_changed_factories_are_not_answered_early(finished, tmp_path):
    """The digest in the meta covers the factories' kwargs and code: a changed model is not
    called complete from the files; the full path builds it and refuses the checkpoint."""
    folder, run, env = finished
    changed = [*run, "--set", "model_op.kwargs.hidden=32"]
    out = _cli(changed, guarded_env(tmp_path / "g", env), folder)
    assert imported(tmp_path / "g"), out.stdout + out.stderr  # went on to the backend
    full = _cli(changed, env, folder)
    assert full.returncode == 2, full.stdout + full.stderr
    assert "CheckpointError" in full.stderr and "model_structure" in full.stderr

    edited = tmp_path / "edited"
    shutil.copytree(folder, edited, ignore=shutil.ignore_patterns("ckpt", "jax-cache", "*.jsonl"))
    shutil.copytree(folder / "ckpt", edited / "ckpt")
    source = edited / "digits_mlp.py"
    source.write_text(source.read_text() + "\n# an edit: the factory's code may differ now\n")
    moved = [str(edited / "digits_mlp.yaml") if a.endswith("digits_mlp.yaml") else a for a in run]
    moved = [a.replace(str(folder / "ckpt"), str(edited / "ckpt")) for a in moved]
    out = _cli(moved, guarded_env(tmp_path / "h", env), edited)
    assert imported(tmp_path / "h"), out.stdout + out.stderr  # not answered from the files
    unedited = tmp_path / "unedited"
    shutil.copytree(folder, unedited, ignore=shutil.ignore_patterns("ckpt", "jax-cache", "*.jsonl"))
    shutil.copytree(folder / "ckpt", unedited / "ckpt")
    moved = [a.replace(str(folder), str(unedited)) for a in run]
    out = _cli(moved, guarded_env(tmp_path / "k", env), unedited)
    assert imported(tmp_path / "k") == [], out.stderr  # the same code elsewhere: answered
    assert "run already complete at step 20" in out.stdout, out.stdout + out.stderr
