"""BlackJAX's own examples, as their users write them (shrunk: fewer draws, no plots).

- ``quickstart()``: BlackJAX's "A Quick Introduction to Blackjax" (docs/examples/quickstart.md):
  1,000 observations of Normal(10, 20), ``logdensity_fn(loc, log_scale, observed=observed)``
  wrapped as ``logdensity = lambda x: logdensity_fn(**x)``, a dict start
  ``{"loc": 1.0, "log_scale": 1.0}``. The observations come from a seeded generator.
- ``logistic_regression()``: the sampling book's "Bayesian Logistic Regression"
  (book/models/logistic_regression.md): scikit-learn's ``make_biclusters`` points, the design
  matrix ``Phi = [1, X0, X1]``, ``logdensity_fn(w, alpha=1.0)`` and the start ``w0`` drawn from
  ``PRNGKey(314)``. Built with float64 enabled (a BlackJAX user's ``jax_enable_x64``, the
  precision pipekit samples in by default), or with ``x64=False`` as the book runs it
  (float32 ``Phi`` and ``w0``, float64 NumPy ``y``).
"""

from __future__ import annotations

import contextlib
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.stats as stats
import numpy as np


def quickstart() -> tuple[Any, dict[str, float]]:
    """The quickstart's ``logdensity`` and ``initial_position``."""
    loc, scale = 10, 20
    observed = np.random.default_rng(0).normal(loc, scale, size=1_000)

    def logdensity_fn(loc: Any, log_scale: Any, observed: Any = observed) -> Any:
        """Univariate Normal"""
        scale = jnp.exp(log_scale)
        logpdf = stats.norm.logpdf(observed, loc, scale)
        return jnp.sum(logpdf)

    logdensity = lambda x: logdensity_fn(**x)  # noqa: E731 - the quickstart's own spelling
    initial_position = {"loc": 1.0, "log_scale": 1.0}
    return logdensity, initial_position


def logistic_regression(x64: bool = True) -> tuple[Any, Any]:
    """The sampling book's ``logdensity_fn`` and ``w0``."""
    from sklearn.datasets import make_biclusters

    with jax.enable_x64(True) if x64 else contextlib.nullcontext():
        num_points = 50
        X, rows, cols = make_biclusters(
            (num_points, 2), 2, noise=0.6, random_state=314, minval=-3, maxval=3
        )
        y = rows[0] * 1.0  # y[i] = whether point i belongs to cluster 1
        Phi = jnp.c_[jnp.ones(num_points)[:, None], X]
        N, M = Phi.shape

        def sigmoid(z: Any) -> Any:
            return jnp.exp(z) / (1 + jnp.exp(z))

        def log_sigmoid(z: Any) -> Any:
            return z - jnp.log(1 + jnp.exp(z))

        def logdensity_fn(w: Any, alpha: float = 1.0) -> Any:
            """The log-probability density function of the posterior distribution of the model."""
            log_an = log_sigmoid(Phi @ w)
            an = Phi @ w
            log_likelihood_term = y * log_an + (1 - y) * jnp.log(1 - sigmoid(an))
            prior_term = alpha * w @ w / 2
            return -prior_term + log_likelihood_term.sum()

        w0 = jax.random.multivariate_normal(jax.random.PRNGKey(314), 0.1 + jnp.zeros(M), jnp.eye(M))
    return logdensity_fn, w0 if not x64 else np.asarray(w0)
