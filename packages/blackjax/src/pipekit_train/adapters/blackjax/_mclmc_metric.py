"""MCLMC's dense preconditioner: each chain's covariance, measured over its own steps.

BlackJAX's tuner estimates a diagonal preconditioner only. On a regression whose intercept
and slope are correlated at -0.99 or beyond (a raw-scale covariate: kid scores on mother's
IQ, temperatures on years near 2000) no diagonal undoes the ridge: the tuned step is set by
its narrow width and the chains crawl along its length (R-hat 1.05-3.4 on seven posteriordb
posteriors, decision 0214). Here a chain's covariance over ``n`` integrator steps becomes
BlackJAX's own ``LowRankInverseMassMatrix`` of full rank — ``diag(sigma) U diag(lam) Uᵀ
diag(sigma)``, the sds and the correlation matrix's eigen-decomposition — which its MCLMC
kernel applies at ``O(d²)`` a step.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

__all__ = ["diagonal_metric", "dense_metric", "as_matrix", "EIGEN_FLOOR"]

#: Correlation eigenvalues below this share of the largest are raised to it: a direction the
#: chain did not move in (fewer steps than dimensions, a chain stuck) is not given zero width.
EIGEN_FLOOR = 1e-6


def diagonal_metric(inverse_mass_matrix: Any) -> Any:
    """A diagonal inverse mass matrix (one chain, ``(d,)``) in the full-rank low-rank form,
    so a chain's metric has one shape whether or not its covariance was measured."""
    from blackjax.mcmc.metrics import LowRankInverseMassMatrix

    d = inverse_mass_matrix.shape[-1]
    return LowRankInverseMassMatrix(
        sigma=jnp.sqrt(inverse_mass_matrix),
        U=jnp.eye(d, dtype=inverse_mass_matrix.dtype),
        lam=jnp.ones_like(inverse_mass_matrix),
    )


def dense_metric(
    kernel: Any,
    logdensity_fn: Any,
    state: Any,
    key: Any,
    metric: Any,
    L: Any,
    step_size: Any,
    n: int,
) -> tuple[Any, Any]:
    """One chain's covariance over ``n`` MCLMC integrator steps from ``state`` (moving with
    ``metric``, ``L``, ``step_size``), as the next metric; and the state it ended in.

    Each step's key is ``fold_in(key, i)``. Sums are of displacements from the start, so an
    intercept near 1e5 with an sd near 1e4 loses no digits to cancellation. A non-finite or
    degenerate estimate keeps ``metric``.
    """
    from jax.flatten_util import ravel_pytree

    from blackjax.mcmc.metrics import LowRankInverseMassMatrix

    x0, _ = ravel_pytree(state.position)
    d = x0.shape[0]

    def step(i: Any, acc: Any) -> Any:
        s, total, outer = acc
        s, _ = kernel(jax.random.fold_in(key, i), s, logdensity_fn, metric, L, step_size)
        dx = ravel_pytree(s.position)[0] - x0
        return s, total + dx, outer + jnp.outer(dx, dx)

    zero = (jnp.zeros((d,), x0.dtype), jnp.zeros((d, d), x0.dtype))
    state, total, outer = jax.lax.fori_loop(0, n, step, (state, *zero))
    mean = total / n
    cov = outer / n - jnp.outer(mean, mean)
    var = jnp.diagonal(cov)
    ok = jnp.all(jnp.isfinite(cov)) & jnp.all(var > 0)
    sd = jnp.sqrt(jnp.where(ok, var, 1.0))
    lam, U = jnp.linalg.eigh(cov / jnp.outer(sd, sd))
    lam = jnp.clip(lam, EIGEN_FLOOR * jnp.max(lam), None)
    ok = ok & jnp.all(jnp.isfinite(lam)) & jnp.all(jnp.isfinite(U))
    measured = LowRankInverseMassMatrix(sigma=sd, U=U, lam=lam)
    chosen = jax.tree_util.tree_map(lambda m, old: jnp.where(ok, m, old), measured, metric)
    return chosen, state


def as_matrix(metric: Any) -> Any:
    """The inverse mass matrices a metric stands for, ``(..., d, d)`` as NumPy: what
    ``backend_info["adapted"]["inverse_mass_matrix"]`` reports, as for NUTS's dense mass."""
    import numpy as np

    sigma, U, lam = (np.asarray(jax.device_get(a)) for a in metric)
    inner = np.einsum("...ik,...k,...jk->...ij", U, lam, U)
    return sigma[..., :, None] * inner * sigma[..., None, :]
