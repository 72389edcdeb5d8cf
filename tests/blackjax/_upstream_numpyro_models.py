"""NumPyro's own example models, for the blackjax backend's NumPyro-model path (shrunk data).

A copy of the two bodies in ``tests/numpyro/_upstream_examples.py`` (one tests folder per
pytest process, so that module is not importable from here); the function bodies are
NumPyro's own:

- ``partially_pooled``: ``examples/baseball.py`` (the partially pooled model; its data are
  the players' at-bats and hits, drawn here instead of read from the 1970 season);
- ``model`` / ``reparam_model``: ``examples/funnel.py`` (Neal's funnel, no data at all,
  centred and through ``LocScaleReparam``).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.handlers import reparam
from numpyro.infer.reparam import LocScaleReparam


# -- examples/baseball.py -------------------------------------------------------------------
def partially_pooled(at_bats, hits=None):
    m = numpyro.sample("m", dist.Uniform(0, 1))
    kappa = numpyro.sample("kappa", dist.Pareto(1, 1.5))
    num_players = at_bats.shape[0]
    with numpyro.plate("num_players", num_players):
        phi_prior = dist.Beta(m * kappa, (1 - m) * kappa)
        phi = numpyro.sample("phi", phi_prior)
        return numpyro.sample("obs", dist.Binomial(at_bats, probs=phi), obs=hits)


def baseball_data(players: int = 18) -> tuple[np.ndarray, np.ndarray]:
    """``(at_bats, hits)``: 45 at-bats each (as in the example's first half-season)."""
    rng = np.random.default_rng(0)
    at_bats = np.full(players, 45, np.int32)
    hits = rng.binomial(45, rng.uniform(0.2, 0.35, size=players)).astype(np.int32)
    return at_bats, hits


# -- examples/funnel.py ---------------------------------------------------------------------
def model(dim=10):
    y = numpyro.sample("y", dist.Normal(0, 3))
    numpyro.sample("x", dist.Normal(jnp.zeros(dim - 1), jnp.exp(y / 2)))


reparam_model = reparam(model, config={"x": LocScaleReparam(0)})
