"""Sweep files for the sweep tests, and the ``pipekit-train`` subprocesses that run them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
CLI = [sys.executable, "-c", "import sys; from pipekit_train.cli import main; sys.exit(main())"]

CALLBACKS = [
    {"Checkpoint": {"every_n_steps": 10, "keep_last": 2}},
    "sweep_factories:KillAt",
    "sweep_factories:RecordStart",
]


def equinox_loop(max_steps: int = 20) -> dict[str, Any]:
    return {
        "backend": "equinox",
        "model_op": {"factory": "sweep_factories:make_model", "kwargs": {"hidden": 16}},
        "dataset": {"factory": "sweep_factories:load_split", "kwargs": {"split": "train"}},
        "val_dataset": {"factory": "sweep_factories:load_split", "kwargs": {"split": "test"}},
        "loss": "cross_entropy",
        "batch_size": 32,
        "max_steps": max_steps,
        "optimizer_config": {"name": "adam", "lr": 1e-3},
        "log_every_n_steps": 5,
        "eval_every_n_steps": 10,
        "callbacks": CALLBACKS,
    }


def svi_loop(max_steps: int = 20) -> dict[str, Any]:
    return {
        "backend": "numpyro-svi",
        "task": {"factory": "sweep_factories:make_svi_task", "kwargs": {"prior_scale": 1.0}},
        "dataset": {"factory": "sweep_factories:load_split", "kwargs": {"split": "train"}},
        "val_dataset": {"factory": "sweep_factories:load_split", "kwargs": {"split": "test"}},
        "batch_size": 64,
        "max_steps": max_steps,
        "optimizer_config": {"name": "adam", "lr": 1e-2},
        "log_every_n_steps": 5,
        "eval_every_n_steps": 10,
        "callbacks": CALLBACKS,
    }


def write_sweep(path: Path, loop: dict[str, Any], space: dict[str, Any], **kw: Any) -> Path:
    data = {
        "loop": loop,
        "folder": str(path.parent / path.stem),
        "objective": "val_accuracy",
        "direction": "maximize",
        "n_trials": 4,
        "seed": 3,
        "sampler": {"name": "TPESampler", "kwargs": {"n_startup_trials": 2}},
        "pruner": {"name": "MedianPruner", "kwargs": {"n_startup_trials": 2}},
        "space": space,
        **kw,
    }
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def env(cache: Path, **extra: str) -> dict[str, str]:
    out = dict(os.environ)
    out["PYTHONPATH"] = os.pathsep.join([str(HERE), out.get("PYTHONPATH", "")])
    out["JAX_PLATFORMS"] = "cpu"
    out["PIPEKIT_TRAIN_COMPILATION_CACHE"] = str(cache)
    out.pop("PIPEKIT_TEST_KILL_AT", None)
    out.update(extra)
    return out


def cli(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=900)
    if check:
        assert done.returncode == 0, done.stdout + done.stderr
    return done


def popen(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*CLI, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )


def trials_of(study: Any) -> list[dict[str, Any]]:
    """Every trial: number, state, params, value, final metrics, pruned-at step, reports."""
    return [
        {
            "number": t.number,
            "state": t.state.name,
            "params": t.params,
            "value": t.value,
            "final_metrics": t.user_attrs.get("final_metrics"),
            "pruned_at": t.user_attrs.get("pipekit_pruned_at"),
            "reports": dict(t.intermediate_values),
        }
        for t in study.get_trials(deepcopy=False)
    ]


def study_of(folder: Path) -> list[dict[str, Any]]:
    """:func:`trials_of` the sweep stored in ``folder``."""
    from pipekit_train.sweep._table import load_study

    return trials_of(load_study(folder))


def starts(path: Path) -> list[tuple[int, str, int]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines():
        pid, folder, step = line.split()
        out.append((int(pid), folder, int(step)))
    return out
