"""A bad ``backend_options`` value is refused by ``pipekit-train run`` from the backend's
light spec module, before its framework is imported (``tests/import_guard.py`` logs and
refuses any such import in the child): the two MCMC backends (numpyro-mcmc, blackjax) and
the two bridges (lightning, keras; equinox has its own file in tests/equinox). The
control, the same file with a good value, does reach the backend."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from import_guard import guarded_env, imported

TASK = """
def make_task():
    import numpyro
    import numpyro.distributions as dist
    from pipekit_train.adapters.bayes import NumpyroTask

    def model(y=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
        numpyro.sample("y", dist.Normal(mu, 1.0), obs=y)

    return NumpyroTask(model=model, num_warmup=10, num_samples=10)


def make_model():
    import torch  # the bridges' model factories import their framework

    return torch


def load_data():
    import numpy as np

    return {"y": np.zeros(5, dtype="float32")}
"""

CASES = {
    "numpyro-mcmc": ["target_accept=2", "init_jitter=-1", "steps_per_call=0", "bogus=1"],
    "blackjax": ["sampler=nutz", "x64=3", "steps_per_call=0"],
    "lightning": ["devices=0", "resume=bogus", "num_workers=-1", "deterministic=maybe"],
    "keras": ["steps_per_execution=0", "resume=bogus"],
}
#: A good value of an option each backend takes (the control).
GOOD = {"numpyro-mcmc": "steps_per_call=5", "blackjax": "steps_per_call=5"}
GOOD |= {"lightning": "num_workers=0", "keras": "resume=auto"}


def _cli(folder: Path, backend: str, option: str, guard: Path) -> subprocess.CompletedProcess[str]:
    config: dict[str, object] = {
        "backend": backend,
        "dataset": {"factory": "sampler_task:load_data"},
        "max_steps": 20,
    }
    if backend in ("lightning", "keras"):
        config |= {"model_op": {"factory": "sampler_task:make_model"}, "loss": "mse"}
    else:
        config["task"] = {"factory": "sampler_task:make_task"}
    path = folder / f"{backend}.yaml"
    path.write_text(yaml.safe_dump(config))
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    cmd = [sys.executable, "-m", "pipekit_train.cli", "run", str(path), "--no-progress"]
    cmd += ["--set", f"backend_options.{option}"]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=guarded_env(guard, env), cwd=folder, timeout=300
    )


@pytest.mark.parametrize("backend", list(CASES))
def test_bad_options_are_refused_before_the_backend_is_imported(
    backend: str, tmp_path: Path
) -> None:
    (tmp_path / "sampler_task.py").write_text(TASK)
    for option in CASES[backend]:
        key = option.split("=")[0]
        guard = tmp_path / f"guard-{key}"
        out = _cli(tmp_path, backend, option, guard)
        assert out.returncode != 0, out.stdout
        assert f"ConfigError: backend_options.{key}" in out.stderr, out.stderr
        assert imported(guard) == [], (option, imported(guard), out.stderr)
    # the control: a good value goes on to the backend, and the guard sees it
    guard = tmp_path / "guard-control"
    out = _cli(tmp_path, backend, GOOD[backend], guard)
    assert imported(guard), out.stderr
