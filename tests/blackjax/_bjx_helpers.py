"""Shared test support for the blackjax backend: tiny targets, loops and one compile cache.

Targets are small (a 3-d Gaussian, a 2-coefficient regression) and runs a few dozen
draws, so the folder stays quick on two CPU cores; one JAX persistent compilation
cache per test process (and its subprocesses) makes repeated programs cheap.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import jax.numpy as jnp
import numpy as np

_TESTS = str(Path(__file__).resolve().parents[1])  # also for the workers run as subprocesses
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from compilation_cache import compilation_cache_dir as shared_compilation_cache_dir  # noqa: E402
from posterior_checks import criterion, param_values, pdb  # noqa: E402

from pipekit_train import TrainingLoop  # noqa: E402
from pipekit_train.adapters.blackjax import BlackjaxTask  # noqa: E402

__all__ = [
    "criterion",
    "param_values",
    "pdb",
    "gauss_logdensity",
    "gauss_task",
    "regression_data",
    "regression_task",
    "regression_posterior",
    "SG_CASES",
    "assert_recovers_regression",
    "compilation_cache_dir",
    "loop_for",
    "numpyro_regression",
]

SCALES = np.array([1.0, 2.0, 0.5])


def gauss_logdensity(position: Any) -> Any:
    """A 3-d Gaussian, mean (1, -1, 0.5) and sds (1, 2, 0.5)."""
    mean = jnp.array([1.0, -1.0, 0.5])
    return -0.5 * jnp.sum(((position - mean) / jnp.asarray(SCALES)) ** 2)


def predict_linear(params: Any, x: Any) -> Any:
    """``x @ params`` for the Gaussian target read as coefficients."""
    return x @ params


def gauss_task(**kw: Any) -> BlackjaxTask:
    base = dict(logdensity_fn=gauss_logdensity, init_position=np.zeros(3), num_warmup=30)
    base.update(kw)
    return BlackjaxTask(**base)


def regression_data(n: int = 64, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """y = 2 x0 - x1 + N(0, 0.5^2)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x @ np.array([2.0, -1.0]) + 0.5 * rng.normal(size=n)).astype(np.float32)
    return x, y


def logprior(params: Any) -> Any:
    """beta ~ Normal(0, 10)."""
    return -0.5 * jnp.sum((params / 10.0) ** 2)


def loglik(params: Any, datum: Any) -> Any:
    """One datum's Normal(x . beta, 0.5) log-likelihood."""
    return -0.5 * ((datum["y"] - datum["x"] @ params) / 0.5) ** 2


def numpyro_regression(x: Any, y: Any = None, N: Any = None) -> None:
    """A NumPyro model: beta ~ Normal(0, 10) per column, sigma ~ HalfNormal(1);
    y ~ Normal(x @ beta, sigma), with a subsample plate for the minibatch samplers."""
    import numpyro
    import numpyro.distributions as dist

    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([x.shape[1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0] if N is None else N, subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, sigma), obs=y)


def regression_task(**kw: Any) -> BlackjaxTask:
    base = dict(logprior_fn=logprior, loglik_fn=loglik, init_position=np.zeros(2), num_warmup=20)
    base.update(kw)
    return BlackjaxTask(**base)


def regression_posterior(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The analytic posterior of beta ~ N(0, 10^2 I), y ~ N(x beta, 0.5^2): mean and sds."""
    x, y = x.astype(np.float64), y.astype(np.float64)
    cov = np.linalg.inv(x.T @ x / 0.25 + np.eye(x.shape[1]) / 100.0)
    return cov @ (x.T @ y / 0.25), np.sqrt(np.diag(cov))


#: sgld / sghmc settings that sample the regression posterior (the raw and NumPyro paths).
SG_CASES = [
    ("sgld", {"step_size": 2e-3, "step_size_power": 0.1}),
    ("sghmc", {"step_size": 0.005, "num_integration_steps": 10}),
]


def assert_recovers_regression(draws: np.ndarray, x: np.ndarray, y: np.ndarray) -> None:
    """SG-MCMC draws of the regression's beta agree with the analytic posterior, within the
    loose bounds its bias allows (no Metropolis correction): means within 5 sd + 0.05, sds
    within a factor 0.3-4."""
    mean, sd = regression_posterior(x, y)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * sd + 0.05), (draws.mean(0), mean, sd)
    assert np.all((draws.std(0) > 0.3 * sd) & (draws.std(0) < 4 * sd)), (draws.std(0), sd)


def compilation_cache_dir() -> str:
    """The JAX persistent compilation cache of these tests (``tests/compilation_cache.py``);
    subprocesses get it as ``PIPEKIT_BJX_CACHE``."""
    return shared_compilation_cache_dir("bjx")


def loop_for(
    task: Any, sampler: str = "nuts", *, options: dict[str, Any] | None = None, **kw: Any
) -> TrainingLoop:
    """A blackjax loop on ``task`` with the shared compilation cache."""
    opts = {"sampler": sampler, "compilation_cache": compilation_cache_dir(), **(options or {})}
    # The regression rows by default (the NumPyro and SG-MCMC paths read them; the raw
    # log densities ignore them); ``dataset=None`` for a loop without data.
    base: dict[str, Any] = dict(
        task=task, backend="blackjax", seed=3, backend_options=opts, dataset=regression_data()
    )
    base.update(kw)
    return TrainingLoop(**base)
