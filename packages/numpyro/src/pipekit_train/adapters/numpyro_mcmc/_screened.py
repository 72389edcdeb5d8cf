"""Screened starts: each chain starts at the best of several NumPyro starts, by log density.

NumPyro's default, ``init_to_uniform``, draws each unconstrained coordinate in (-2, 2) and
keeps the first draw whose potential energy and gradient are finite. Finite is not enough: a
start where the density is flat to rounding far from the posterior (an ARMA(1,1) whose MA
coefficient starts outside (-1, 1), so its error recursion explodes) leaves a chain stuck at
its start for the whole run (R-hat 1.53, ESS 7 at NumPyro's defaults, ``docs/validation.md``).

So each chain draws ``SCREEN_CANDIDATES`` (16) starts the same way (uniform in (-2, 2) in the
unconstrained space of NumPyro's own prototype, as ``init_to_uniform`` draws) and keeps the
valid one (finite potential energy and gradient) with the lowest potential energy: a start
in the posterior's bulk beats one in a flat tail by orders of magnitude of density. The
candidates come from their own key (the seed folded with a
constant), so the starts are reproducible from the seed and the sampler's key stream is the
one ``MCMC.run`` uses: given these starts (``MCMC.run(..., init_params=starts)``) the draws
are ``MCMC.run``'s to the bit. The screen is one compiled program, all candidates in one
``vmap`` (0.86 s cold on eight schools; through NumPyro's ``find_valid_initial_params`` and
its retry loop 1.3 s; through bayes' ``screened_positions``, blackjax's screen, 1.8 s, so
NumPyro's keeps its own flat ``vmap``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from pipekit_train.adapters.bayes import SCREEN_CANDIDATES, SCREEN_COMPILER_OPTIONS, SCREEN_SALT

__all__ = ["screened_starts", "Screened", "DISCRETE"]

#: The reason a model with a discrete latent site is not screened: by design (NUTS enumerates
#: those sites), so the run says nothing of it.
DISCRETE = "discrete latent site"


class Screened(NamedTuple):
    """The screen's answer: ``starts`` (``{site: (num_chains, …)}``), or None and ``reason``,
    why every chain starts as NumPyro's own ``init_to_uniform`` would instead."""

    starts: dict[str, Any] | None
    reason: str | None = None


def screened_starts(
    model: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    seed: int,
    num_chains: int,
    *,
    candidates: int = SCREEN_CANDIDATES,
) -> Screened:
    """Unconstrained starts, ``{site: (num_chains, …)}``, or None and the reason where they
    cannot be drawn.

    None (the chain then starts as NumPyro's own ``init_to_uniform`` would) for a model this
    screen cannot weigh: discrete latent sites (NUTS enumerates them; ``DISCRETE``), or any
    other failure to trace (the exception, named); also when no candidate of a chain is
    valid, where NumPyro's own init raises its own error.
    """
    import jax
    import jax.numpy as jnp
    from numpyro import handlers
    from numpyro.distributions.transforms import biject_to
    from numpyro.infer.util import potential_energy

    total = num_chains * candidates

    def screen() -> tuple[dict[str, Any], Any]:
        # The key is made inside the program: made eagerly, its two operations were two more
        # compilations of their own (~0.15 s of a cold start).
        key = jax.random.fold_in(jax.random.PRNGKey(seed), SCREEN_SALT)
        # The unconstrained prototype: only its shapes matter, so each latent site takes the
        # image of zeros (an improper prior is never sampled); a discrete latent site is
        # NUTS's to enumerate, not this screen's.
        seeded = handlers.substitute(handlers.seed(model, key), substitute_fn=_zeros)
        trace = handlers.trace(seeded).get_trace(*args, **kwargs)
        prototype = {}
        for name, site in trace.items():
            if site["type"] != "sample" or site["is_observed"]:
                continue
            if site["fn"].support.is_discrete:
                raise _Discrete(f"{DISCRETE} {name!r}")
            prototype[name] = biject_to(site["fn"].support).inv(site["value"])
        # init_to_uniform's draws: each unconstrained coordinate uniform in (-2, 2).
        keys = jax.random.split(key, len(prototype))
        z = {
            name: jax.random.uniform(
                k, (total, *jnp.shape(v)), jnp.result_type(v), minval=-2.0, maxval=2.0
            )
            for k, (name, v) in zip(keys, sorted(prototype.items()), strict=True)
        }
        pe, grad = jax.vmap(jax.value_and_grad(lambda u: potential_energy(model, args, kwargs, u)))(
            z
        )
        valid = jnp.isfinite(pe)
        for g in jax.tree_util.tree_leaves(grad):
            valid &= jnp.all(jnp.isfinite(g.reshape(total, -1)), axis=1)
        pe = jnp.where(valid, pe, jnp.inf).reshape(num_chains, candidates)
        rows = jnp.arange(num_chains) * candidates + jnp.argmin(pe, axis=1)
        return {k: v[rows] for k, v in z.items()}, jnp.all(jnp.isfinite(pe.min(axis=1)))

    try:
        starts, found = jax.jit(screen, compiler_options=SCREEN_COMPILER_OPTIONS)()
    except _Discrete:
        return Screened(None, DISCRETE)
    except Exception as exc:  # noqa: BLE001 - named to the user by the caller
        return Screened(None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
    if not starts:
        return Screened(None, "the model has no latent site")
    if not bool(found):
        return Screened(None, "no valid candidate for some chain")
    return Screened(starts)


class _Discrete(ValueError):
    """A discrete latent site: not screened, by design."""


def _zeros(site: dict[str, Any]) -> Any:
    """A latent continuous site's value at the origin of its unconstrained space (None:
    the site is left to the model, as ``substitute`` does with None)."""
    import jax.numpy as jnp
    from numpyro.distributions.transforms import biject_to

    if site["type"] != "sample" or site["is_observed"] or site["fn"].support.is_discrete:
        return None
    fn = site["fn"]
    transform = biject_to(fn.support)
    shape = fn.shape(site["kwargs"].get("sample_shape", ()))
    return transform(jnp.zeros(transform.inverse_shape(shape)))
