"""NumPyro's own example models, as their users wrote them (shrunk to synthetic data).

Shared by the numpyro and blackjax tests (``tests/`` is on ``sys.path``, root conftest).

- ``partially_pooled``: ``examples/baseball.py`` (the partially pooled model; its data
  are the players' at-bats and hits, drawn here instead of read from the 1970 season);
- ``model`` / ``reparam_model``: ``examples/funnel.py`` (Neal's funnel, no data at all,
  centred and through ``LocScaleReparam``);
- ``ar2_scan``: ``examples/ar2.py`` (an AR(2) series with ``numpyro.contrib.control_flow.scan``,
  on the example's own synthetic series ``sin(t) + 0.1 noise``, shorter).

The function bodies are the upstream ones; only the data is made here.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.contrib.control_flow import scan
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


# -- examples/ar2.py ------------------------------------------------------------------------
def ar2_scan(y):
    alpha_1 = numpyro.sample("alpha_1", dist.Normal(0, 1))
    alpha_2 = numpyro.sample("alpha_2", dist.Normal(0, 1))
    const = numpyro.sample("const", dist.Normal(0, 1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1))

    def transition(carry, _):
        y_prev, y_prev_prev = carry
        m_t = const + alpha_1 * y_prev + alpha_2 * y_prev_prev
        y_t = numpyro.sample("y", dist.Normal(m_t, sigma))
        carry = (y_t, y_prev)
        return carry, None

    timesteps = jnp.arange(y.shape[0] - 2)
    init = (y[1], y[0])

    with numpyro.handlers.condition(data={"y": y[2:]}):
        scan(transition, init, timesteps)


def ar2_data(num_data: int = 60) -> jax.Array:
    """The example's own artificial series (``main``), ``num_data`` long."""
    rng_key = jax.random.PRNGKey(0)
    t = jnp.arange(0, num_data)
    return jnp.sin(t) + jax.random.normal(rng_key, (num_data,)) * 0.1
