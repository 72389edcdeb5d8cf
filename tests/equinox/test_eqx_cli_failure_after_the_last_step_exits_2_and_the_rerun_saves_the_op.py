"""`pipekit-train run` when building the trained op fails after the last step (issue 36,
item 7): the digits example, with its op class swapped for one whose ``with_module`` calls
an export service that is down while a flag file exists.

The first run exits 2 with ``FinishError`` naming the stage, the call and the final
checkpoint (no traceback); the checkpoint of step 20 is on disk. The rerun with ``--save``
(it needs the op) trains nothing: "run already complete at step 20", and the saved op
loads back holding the checkpoint's trained weights.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
from _eqx_helpers import REPO, subprocess_env

from pipekit_train.adapters.equinox import JaxModelOp
from pipekit_train.checkpoints import read_state

EXAMPLES = REPO / "examples"

FLAKY = """
import os

from digits_mlp import make_model as _make_model
from pipekit_train.adapters.equinox import JaxModelOp


class ExportingOp(JaxModelOp):
    def with_module(self, module, state=None):
        if os.path.exists(os.environ["EXPORT_DOWN_FLAG"]):
            raise ConnectionError("export service unavailable")
        return super().with_module(module, state)


def make_model(**kwargs):
    op = _make_model(**kwargs)
    return ExportingOp(op.module, factory=op.factory, factory_kwargs=op.factory_kwargs)
"""


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pipekit_train.cli", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=300)


def test_a_failed_op_build_exits_2_naming_it_and_the_rerun_saves_without_training(tmp_path):
    for name in ("digits_mlp.yaml", "digits_mlp.py"):
        shutil.copy(EXAMPLES / name, tmp_path / name)
    (tmp_path / "flaky_export.py").write_text(FLAKY)
    flag = tmp_path / "export-down"
    flag.touch()
    ckpt = tmp_path / "ckpt"
    run = [
        "run",
        str(tmp_path / "digits_mlp.yaml"),
        "--set",
        "model_op.factory=flaky_export:make_model",
        "--set",
        "model_op.kwargs={hidden: 32, depth: 1, seed: 0}",
        "--set",
        "max_steps=20",
        "--set",
        "eval_every_n_steps=20",
        "--set",
        f"checkpoint_dir={ckpt}",
        "--set",
        "callbacks=[{Checkpoint: {every_n_steps: 10}}]",
        "--set",
        f"metric_writer.path={tmp_path / 'm.jsonl'}",
        "--no-progress",
    ]
    env = subprocess_env(
        PIPEKIT_TRAIN_COMPILATION_CACHE=str(tmp_path / "jax-cache"),
        EXPORT_DOWN_FLAG=str(flag),
    )
    first = _cli(run, env, tmp_path)
    assert first.returncode == 2, first.stdout + first.stderr
    assert "Traceback" not in first.stderr, first.stderr
    assert "pipekit-train: error: FinishError:" in first.stderr
    assert "building the trained operator failed after the last step" in first.stderr
    assert "ConnectionError: export service unavailable" in first.stderr
    assert "ExportingOp.with_module (flaky_export.py:" in first.stderr
    assert f"The final checkpoint, step 20 in {ckpt}" in first.stderr
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [10, 20]
    weights = read_state(ckpt, step=20)

    flag.unlink()  # the service is back
    saved = tmp_path / "model"
    again = _cli([*run, "--save", str(saved)], env, tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "run already complete at step 20" in again.stdout, again.stdout
    assert f"saved trained model to {saved}" in again.stdout
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [10, 20]
    op = JaxModelOp.load(saved, like=eqx.nn.MLP(64, 10, 32, 1, key=jax.random.PRNGKey(1)))
    # The saved op holds the checkpoint's trained weights (the state is stored by leaf).
    trained = np.asarray(op.module.layers[0].weight)
    assert any(np.array_equal(np.asarray(v), trained) for v in weights.values())
