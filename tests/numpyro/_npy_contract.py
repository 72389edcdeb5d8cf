"""The NumPyro backends' cases for the contract kit (``pipekit_train.testing``).

A Bayesian linear regression on 48 generated rows: SVI with an AutoNormal guide over
minibatches (16 steps), and NUTS (8 warmup + 8 draws, one chain). Every object field is an
import string, so the kit can run the loops through ``pipekit-train run``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from contract_cases import case

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

SVI = case(
    "numpyro-svi",
    __name__,
    loop="svi_loop",
    bad_options={"steps_per_call": -1, "shuffle": "sometimes"},
    op_load_kwargs=f"{__name__}:load_kwargs",
)
MCMC = case(
    "numpyro-mcmc",
    __name__,
    loop="mcmc_loop",
    bad_options={"target_accept": 1.5, "chain_method": "in-a-hurry"},
    op_load_kwargs=f"{__name__}:load_kwargs",
)


def linreg(x: Any, y: Any = None, N: Any = None) -> None:
    """``y ~ Normal(x @ w + b, sigma)`` with standard priors; ``N`` rows in all (a minibatch
    of ``x.shape[0]`` of them)."""
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", N if N is not None else x.shape[0], subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


def make_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(48, 2)).astype(np.float32)
    y = (x @ np.array([1.0, -0.5]) + 0.3 + 0.2 * rng.normal(size=48)).astype(np.float32)
    return x, y


def op_inputs() -> np.ndarray:
    return make_data()[0][:5]


def load_kwargs() -> dict[str, Any]:
    """What a user passes to ``NumpyroPredictiveOp.load``: their own model."""
    return {"model": linreg}


def svi_task() -> NumpyroTask:
    return NumpyroTask(model=linreg, guide="AutoNormal", predictive_samples=8)


def mcmc_task() -> NumpyroTask:
    return NumpyroTask(model=linreg, num_warmup=8, num_samples=8, predictive_samples=8)


def _loop(backend: str, task: str, **fields: Any) -> TrainingLoop:
    return TrainingLoop(
        task=f"{__name__}:{task}", dataset=f"{__name__}:make_data", backend=backend, **fields
    )


def svi_loop() -> TrainingLoop:
    """16 SVI steps over minibatches of 16."""
    return _loop(
        "numpyro-svi",
        "svi_task",
        batch_size=16,
        max_steps=16,
        seed=3,
        optimizer_config={"name": "adam", "lr": 0.01},
        backend_options={"steps_per_call": 2},
    )


def mcmc_loop() -> TrainingLoop:
    """8 warmup and 8 draws of NUTS."""
    return _loop("numpyro-mcmc", "mcmc_task", seed=5)
