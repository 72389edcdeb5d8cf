"""Pathfinder: BlackJAX's L-BFGS path to a Gaussian approximation, then i.i.d. draws from it.

Step meaning: the ``warmup`` phase is **one** step running ``blackjax.vi.pathfinder.approximate``
per chain (one L-BFGS optimisation from the chain's start, ``maxiter`` iterations, the
approximation along the path with the best ELBO estimate of ``num_elbo_samples`` draws); a kill
during it redoes it on resume with the same key (the same bits). Each ``sampling`` step draws one
position per chain from that approximation with ``pathfinder.sample``. ``num_warmup`` does not
apply (the approximation is one step whatever it is). The draws are independent given the
approximation, which is not the posterior: a variational answer, judged like SVI's.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.engine import Phase

from ._sampler import Sampler, chain_count, over_chains

__all__ = ["pathfinder", "pathfinder_restart"]


def pathfinder(
    logdensity_fn: Any, positions: Any, params: dict[str, Any], num_samples: int
) -> Sampler:
    """The ``pathfinder`` sampler from ``positions`` (chains stacked on axis 0)."""
    from blackjax.vi import pathfinder as pf

    num_chains = chain_count(positions)

    def fit(key: Any, start: Any) -> Any:
        state, _ = pf.approximate(
            key,
            logdensity_fn,
            start,
            num_samples=params["num_elbo_samples"],
            maxiter=params["maxiter"],
            maxcor=params["maxcor"],
        )
        return state

    one_start = jax.tree_util.tree_map(lambda a: a[0], positions)
    shapes = jax.eval_shape(fit, jax.random.PRNGKey(0), one_start)  # abstract: nothing runs
    empty = jax.tree_util.tree_map(lambda s: jnp.zeros((num_chains, *s.shape), s.dtype), shapes)
    carry = {"start": positions, "state": empty}

    def approximate(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        state = over_chains(fit, num_chains)(jax.random.split(key, num_chains), carry["start"])
        return dict(carry, state=state), {"elbo": state.elbo}, state.position

    def sample(carry: dict[str, Any], batch: Any, key: Any) -> tuple[Any, ...]:
        state = carry["state"]
        position, log_q = over_chains(pf.sample, num_chains)(
            jax.random.split(key, num_chains), state
        )
        return carry, {"elbo": state.elbo, "log_q": log_q}, position

    return Sampler(
        num_chains=num_chains,
        carry=carry,
        phases=[Phase("warmup", 1, collect=False), Phase("sampling", num_samples, collect=True)],
        steps={"warmup": approximate, "sampling": sample},
        step_meaning=(
            "warmup: one step running Pathfinder's L-BFGS approximation per chain; sampling: "
            "one draw per chain from it"
        ),
    )


def pathfinder_restart(logdensity_fn: Any, key: Any, position: Any) -> tuple[Any, Any, Any]:
    """One chain moved toward the bulk: a draw of Pathfinder's approximation fitted from
    ``position`` (BlackJAX's defaults), the diagonal of that approximation's covariance
    (flat, the L-BFGS inverse Hessian ``diag(alpha) + beta gamma betaᵀ``), and whether both
    are usable (finite log density at the draw, a positive finite diagonal).

    Where they are not, ``position`` comes back unchanged with a unit diagonal: a failed fit
    never leaves a chain worse than its start. The warm start of nuts / hmc
    (``warm_start: pathfinder``) and of mclmc, whose tuner takes the diagonal as its first
    preconditioner.
    """
    from blackjax.vi import pathfinder as pf

    fit_key, draw_key = jax.random.split(key)
    approx, _ = pf.approximate(fit_key, logdensity_fn, position)
    draw, _ = pf.sample(draw_key, approx)
    diagonal = approx.alpha + jnp.sum((approx.beta @ approx.gamma) * approx.beta, axis=-1)
    ok = jnp.isfinite(logdensity_fn(draw)) & jnp.all(jnp.isfinite(diagonal) & (diagonal > 0))
    moved = jax.tree_util.tree_map(lambda new, old: jnp.where(ok, new, old), draw, position)
    return moved, jnp.where(ok, diagonal, jnp.ones_like(diagonal)), ok
