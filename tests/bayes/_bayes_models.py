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
    """A model of ``x`` alone (no ``y``): the (x, y) form does not bind to it."""
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


def ar1(x: Any, y: Any = None) -> None:
    """AR(1) with unit innovations, y[t] ~ Normal(phi * y[t-1], 1), y[-1] = 0: the likelihood
    depends on the order of the rows (``x`` is a dummy column giving the length)."""
    from numpyro.contrib.control_flow import scan

    phi = numpyro.sample("phi", dist.Normal(0.0, 1.0))

    def transition(prev: Any, y_t: Any) -> tuple[Any, Any]:
        cur = numpyro.sample("obs", dist.Normal(phi * prev, 1.0), obs=y_t)
        return cur, cur

    scan(transition, np.zeros((), np.float32), y, length=x.shape[0])


def ar1_data(n: int = 200, phi: float = 0.7, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A simulated AR(1) series (``x`` a dummy column) and nothing else."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n)
    prev = 0.0
    for t in range(n):
        prev = phi * prev + rng.normal()
        y[t] = prev
    return np.zeros((n, 1), np.float32), y.astype(np.float32)


def ar1_posterior(y: np.ndarray) -> tuple[float, float]:
    """The exact posterior of ``ar1``'s phi (Normal prior, Gaussian likelihood): mean, sd."""
    y = np.asarray(y, np.float64)
    lag = np.concatenate([[0.0], y[:-1]])
    precision = 1.0 + float(lag @ lag)
    return float(lag @ y) / precision, precision**-0.5


def groups(x: Any, y: Any = None, g: Any = None, prior_scale: float = 1.0) -> None:
    """y ~ Normal(a[g], 0.1): a per-group intercept indexed by the dataset's named array
    ``g``; ``prior_scale`` a static hyper-parameter (``NumpyroTask.model_kwargs``)."""
    a = numpyro.sample("a", dist.Normal(0.0, prior_scale).expand([3]).to_event(1))
    numpyro.deterministic("prior_scale", jnp_asarray(prior_scale))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(a[g], 0.1), obs=y)


def jnp_asarray(value: Any) -> Any:
    import jax.numpy as jnp

    return jnp.asarray(value, dtype=jnp.result_type(float))


def groups_data(n: int = 60, seed: int = 0) -> dict[str, np.ndarray]:
    """Rows in three groups with means -1, 0.5, 2 (sd 0.1)."""
    rng = np.random.default_rng(seed)
    g = np.arange(n) % 3
    y = np.array([-1.0, 0.5, 2.0])[g] + 0.1 * rng.normal(size=n)
    return {"x": np.zeros((n, 1), np.float32), "y": y.astype(np.float32), "g": g.astype(np.int32)}


def factor_normal(x: Any, y: Any = None) -> None:
    """A likelihood written as ``numpyro.factor``: y ~ Normal(mu, 1), mu ~ Normal(0, 10)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
    numpyro.factor("lik", dist.Normal(mu, 1.0).log_prob(y).sum())


def correlated(x: Any, y: Any = None) -> None:
    """A 2-D Gaussian with correlation 0.999 (a weak observation on z[0] keeps an observed
    site): with a diagonal mass matrix NUTS needs long trajectories, so a small
    ``max_tree_depth`` saturates."""
    import jax.numpy as jnp

    cov = jnp.array([[1.0, 0.999], [0.999, 1.0]])
    z = numpyro.sample("z", dist.MultivariateNormal(jnp.zeros(2), covariance_matrix=cov))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(z[0], 100.0), obs=y)
