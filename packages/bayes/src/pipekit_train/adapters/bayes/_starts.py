"""Per-chain starts around ``init_values``: each chain's own jitter, deterministic in the seed.

``numpyro.infer.init_to_value`` puts every chain at the one value given, and R-hat then
compares chains that never started apart. ``init_to_value_jittered(values, scale)`` adds
Normal(0, ``scale``) noise to each named site *in its unconstrained space* (so a scale
stays positive, a simplex stays a simplex), drawn from the key NumPyro gives each chain's
initialisation (split from the run's seed); the other sites start ``init_to_uniform``.
``scale = 0`` is ``init_to_value`` exactly.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["init_to_value_jittered"]


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
