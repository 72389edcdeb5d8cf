"""Chain starts: per-chain jitter around ``init_values``, and screened starts.

**Jitter.**
``numpyro.infer.init_to_value`` puts every chain at the one value given, and R-hat then
compares chains that never started apart. ``init_to_value_jittered(values, scale)`` adds
Normal(0, ``scale``) noise to each named site *in its unconstrained space* (so a scale
stays positive, a simplex stays a simplex), drawn from the key NumPyro gives each chain's
initialisation (split from the run's seed); the other sites start ``init_to_uniform``.
``scale = 0`` is ``init_to_value`` exactly.

**Screened starts** (``screened_positions``, blackjax's NUTS / HMC default; numpyro-mcmc's
does the same with NumPyro's own candidate draws): each chain keeps the best, by log density
with a finite value and gradient, of its own start and ``SCREEN_CANDIDATES`` more
``init_to_uniform`` draws (uniform in (-2, 2) in the unconstrained space). A finite start is
not enough: where the density is flat to rounding far from the posterior (an ARMA's MA
coefficient outside (-1, 1)) a chain never leaves it. One compiled program; the candidates'
key is the caller's, so the starts are reproducible from the seed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "SCREEN_CANDIDATES",
    "SCREEN_COMPILER_OPTIONS",
    "SCREEN_SALT",
    "init_to_value_jittered",
    "screened_positions",
]

#: Uniform candidates per chain besides its own start; the chain keeps the best. A start
#: region holding half of the (-2, 2) box that a chain cannot leave is then drawn for all of
#: them with p = 1.5e-5.
SCREEN_CANDIDATES = 16
#: Folded into a run's key for the screen's candidates, so they never share the sampler's
#: key stream (both backends' screens).
SCREEN_SALT = 0x5C4EE2ED
#: XLA options for a screen, a program run once on a few candidates, where compiling is
#: nearly all its cost (both backends' screens). LLVM's optimisation off cut numpyro-mcmc's
#: screen compile on eight schools 0.54 -> 0.35 s, and XLA's older (non-"fusion") emitters
#: 0.22 -> 0.12 s more: 36.5 -> 23.0 s over 23 posteriordb models x 4 seeds, 4 chains. Only
#: the choice among the candidates rests on its arithmetic, and the starts came out the same
#: bits for all of them (eight schools: seeds 0-11).
SCREEN_COMPILER_OPTIONS = {
    "xla_backend_optimization_level": 0,
    "xla_llvm_disable_expensive_passes": True,
    "xla_cpu_use_fusion_emitters": False,
}


def init_to_value_jittered(
    site: dict[str, Any] | None = None,
    values: Mapping[str, Any] | None = None,
    scale: float = 0.0,
) -> Any:
    """A NumPyro init strategy: ``values`` (site → constrained value) plus per-chain noise."""
    if site is None:
        strategy: Callable[..., Any] = functools.partial(
            init_to_value_jittered, values=dict(values or {}), scale=float(scale)
        )
        return strategy
    from numpyro.distributions.transforms import biject_to
    from numpyro.infer import init_to_uniform

    values = values or {}
    if site["type"] == "sample" and not site["is_observed"] and site["name"] in values:
        import jax
        import jax.numpy as jnp

        value = jnp.asarray(values[site["name"]])
        key = site["kwargs"].get("rng_key")
        if scale == 0.0 or key is None:
            return value
        transform = biject_to(site["fn"].support)
        u = transform.inv(value)
        u = u + scale * jax.random.normal(key, jnp.shape(u), dtype=jnp.result_type(u))
        return transform(u)
    return init_to_uniform(site)


def screened_positions(
    logdensity_fn: Callable[[Any], Any],
    positions: Any,
    key: Any,
    *,
    candidates: int = SCREEN_CANDIDATES,
    radius: float = 2.0,
) -> tuple[Any, Any]:
    """``positions`` (unconstrained, a leading chain axis), each chain's replaced by the best
    of it and ``candidates`` uniform draws in ``(-radius, radius)``, by log density; and,
    per chain, whether that best is valid.

    A candidate counts only with a finite log density and gradient; a chain none of whose
    candidates beats its own start keeps it. One compiled program (also inside a caller's).
    """
    import jax
    import jax.numpy as jnp

    def per_chain(k: Any, start: Any) -> Any:
        leaves, tree = jax.tree_util.tree_flatten(start)
        keys = jax.random.split(k, len(leaves))
        stacked = [
            jnp.concatenate(
                [
                    jnp.asarray(leaf)[None],
                    jax.random.uniform(
                        kk,
                        (candidates, *jnp.shape(leaf)),
                        jnp.result_type(leaf),
                        -radius,
                        radius,
                    ),
                ]
            )
            for kk, leaf in zip(keys, leaves, strict=True)
        ]
        everyone = jax.tree_util.tree_unflatten(tree, stacked)
        value, grad = jax.vmap(jax.value_and_grad(logdensity_fn))(everyone)
        finite = jnp.isfinite(value)
        for g in jax.tree_util.tree_leaves(grad):
            finite &= jnp.all(jnp.isfinite(g.reshape(candidates + 1, -1)), axis=1)
        best = jnp.argmax(jnp.where(finite, value, -jnp.inf))
        return jax.tree_util.tree_map(lambda a: a[best], everyone), finite[best]

    chains = jax.tree_util.tree_leaves(positions)[0].shape[0]
    screen = jax.jit(jax.vmap(per_chain), compiler_options=SCREEN_COMPILER_OPTIONS)
    return screen(jax.random.split(key, chains), positions)
