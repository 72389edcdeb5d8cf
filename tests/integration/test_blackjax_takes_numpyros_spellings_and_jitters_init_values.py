"""blackjax's nuts takes the canonical ``max_tree_depth`` and NumPyro's / its own spellings
(``target_accept_prob``, ``max_num_doublings``), one concept under two names with different
values being a ``ConfigError`` naming both; ``init_jitter`` gives each chain its own start
around ``init_values``, deterministic in the seed, on blackjax and numpyro-mcmc alike
(issue 25 item 5: every chain at one start made R-hat mean less)."""

from __future__ import annotations

import sys
from pathlib import Path

import jax
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.blackjax import BlackjaxTask, parse_options
from pipekit_train.adapters.blackjax._target import build_target, check_target
from pipekit_train.adapters.numpyro_mcmc._chain import ChainStep, make_kernel
from pipekit_train.adapters.numpyro_mcmc._options import parse_options as mcmc_options
from pipekit_train.errors import ConfigError

# The shared helpers live beside the blackjax tests; this test needs several backends.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "blackjax"))
from _bjx_helpers import regression_data  # noqa: E402

X, Y = regression_data()
VALUES = {"beta": [0.5, -0.5], "sigma": 0.7}


def regression(x, y=None):
    """beta ~ Normal(0, 10), sigma ~ HalfNormal(1); y ~ Normal(x @ beta, sigma)."""
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([x.shape[1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, sigma), obs=y)


def test_numpyro_spellings_are_accepted_and_conflicts_name_both() -> None:
    p = parse_options({"max_num_doublings": 6, "target_accept_prob": 0.9}).params
    assert p["max_tree_depth"] == 6 and p["target_accept"] == 0.9
    assert parse_options({"max_tree_depth": 7}).params["max_tree_depth"] == 7
    with pytest.raises(ConfigError, match="max_num_doublings.*max_tree_depth") as err:
        parse_options({"max_num_doublings": 6, "max_tree_depth": 7})
    assert err.value.field == "backend_options.max_tree_depth"


def _blackjax_starts(seed: int, jitter: float) -> dict[str, np.ndarray]:
    task = BlackjaxTask(numpyro_task=NumpyroTask(model=regression, num_chains=3))
    options = parse_options({"init_values": VALUES, "init_jitter": jitter})
    check_target(task, "nuts", X, Y, 16, options.init_values)
    target = build_target(
        task,
        "nuts",
        X,
        Y,
        3,
        jax.random.PRNGKey(seed),
        16,
        options.init_values,
        init_jitter=options.init_jitter,
    )
    return {k: np.asarray(v) for k, v in target.positions.items()}


def _mcmc_starts(seed: int, jitter: float) -> dict[str, np.ndarray]:
    options = mcmc_options({"init_values": VALUES, "init_jitter": jitter})
    task = NumpyroTask(model=regression, num_chains=3)
    chain = ChainStep(make_kernel(regression, options), task, (X, Y))
    return {k: np.asarray(v) for k, v in chain.init(seed).z.items()}


@pytest.mark.parametrize("starts", [_blackjax_starts, _mcmc_starts], ids=["blackjax", "mcmc"])
def test_init_jitter_gives_each_chain_its_own_start_deterministic_in_the_seed(starts) -> None:
    exact = starts(0, 0.0)
    np.testing.assert_allclose(exact["beta"], np.tile(VALUES["beta"], (3, 1)), rtol=1e-6)
    a, b, other = starts(0, 0.5), starts(0, 0.5), starts(1, 0.5)
    for site in ("beta", "sigma"):
        assert a[site].tobytes() == b[site].tobytes()
        assert not np.allclose(a[site], other[site])
        assert len({tuple(np.atleast_1d(r)) for r in np.round(a[site], 6)}) == 3
    # Jitter is in the unconstrained space, of the requested size: near, not at, the values.
    assert np.all(np.abs(a["beta"] - np.asarray(VALUES["beta"])) < 2.5)
    assert np.all(np.abs(a["sigma"] - np.log(VALUES["sigma"])) < 2.5)
