"""Small NumPyro models for the bayes tests, importable by string (``_bayes_models:linreg``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpyro
import numpyro.distributions as dist


def linreg(x: Any, y: Any = None, N: int | None = None) -> None:
    """y ~ Normal(x @ w + b, sigma), with a deterministic site ``mean_w``."""
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    b = numpyro.sample("b", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.deterministic("mean_w", w.mean())
    n = x.shape[0]
    with numpyro.plate("data", n if N is None else N, subsample_size=n):
        numpyro.sample("obs", dist.Normal(x @ w + b, sigma), obs=y)


def no_y(x: Any) -> None:
    """A model with the wrong signature (no ``y``)."""
    numpyro.sample("a", dist.Normal(0.0, 1.0))


def linreg_data(n: int = 60, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)).astype(np.float32)
    y = (x @ np.array([1.5, -0.5]) + 0.3 + 0.2 * rng.normal(size=n)).astype(np.float32)
    return x, y


def location(x: Any, y: Any = None) -> None:
    """Two parameters: y ~ Normal(mu, sigma) (``x`` only sets the number of rows)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(mu, sigma), obs=y)


def position_mean(params: Any, x: Any) -> Any:
    """A raw log-density op's ``predict_fn``: the position's first coordinate per row of x."""
    return x[:, 0] * 0.0 + params[0]
