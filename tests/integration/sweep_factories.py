"""Factories the sweep tests' YAML files name (``sweep_factories:…``), and two test callbacks.

The sweep subprocesses get this folder on ``PYTHONPATH``. ``KillAt`` SIGKILLs its own
process once, at one step of one trial, when ``PIPEKIT_TEST_KILL_AT`` says
``<trial>:<step>`` (unset: it does nothing, so the same config runs uninterrupted);
``RecordStart`` appends ``<pid> <run folder>`` to ``PIPEKIT_TEST_STARTS`` at each run start.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.datasets import load_digits

from pipekit_train import Callback


def load_split(split: str = "train", n: int = 400) -> dict[str, np.ndarray]:
    """The first ``n`` digits (train) or the next 200 (test): float32 x [., 64], int32 y."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    part = slice(0, n) if split == "train" else slice(n, n + 200)
    return {"x": x[part], "y": y[part]}


def make_model(hidden: int = 16, seed: int = 0) -> Any:
    import equinox as eqx
    import jax

    from pipekit_train.adapters.equinox import JaxModelOp

    module = eqx.nn.MLP(64, 10, hidden, 1, key=jax.random.PRNGKey(seed))
    return JaxModelOp(
        module,
        factory="sweep_factories:make_model",
        factory_kwargs={"hidden": hidden, "seed": seed},
    )


def softmax_regression(x: Any, y: Any = None, N: Any = None, scale: float = 1.0) -> None:
    """Bayesian multinomial logistic regression on the 64 pixels."""
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, scale).expand([64, 10]).to_event(2))
    b = numpyro.sample("b", dist.Normal(0.0, scale).expand([10]).to_event(1))
    n = x.shape[0]
    with numpyro.plate("data", n if N is None else N, subsample_size=n):
        numpyro.sample("obs", dist.Categorical(logits=x @ w + b), obs=y)


def make_svi_task(prior_scale: float = 1.0) -> Any:
    from functools import partial

    from pipekit_train.adapters.bayes import NumpyroTask

    return NumpyroTask(
        model=partial(softmax_regression, scale=prior_scale),
        guide="AutoNormal",
        predictive_samples=4,
    )


class KillAt(Callback):
    """SIGKILL this process at step ``s`` of trial ``t`` when ``PIPEKIT_TEST_KILL_AT=t:s``."""

    def on_step_end(self, loop: Any, state: Any) -> None:
        where = os.environ.get("PIPEKIT_TEST_KILL_AT")
        if not where:
            return
        trial, step = (int(v) for v in where.split(":"))
        if Path(loop.checkpoint_dir).name == str(trial) and state.step == step:
            os.kill(os.getpid(), signal.SIGKILL)


class RecordStart(Callback):
    """Append ``<pid> <checkpoint_dir> <step>`` to ``$PIPEKIT_TEST_STARTS`` at each run start."""

    def on_run_start(self, loop: Any, state: Any) -> None:
        path = os.environ.get("PIPEKIT_TEST_STARTS")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{os.getpid()} {loop.checkpoint_dir} {state.step}\n")
