"""numpyro-mcmc's chains start screened by default: each at the best of 16 of NumPyro's own
uniform starts by log density, so none starts stuck where the density is flat.

posteriordb's ARMA(1,1) at seed 0: NumPyro's ``init_to_uniform`` puts chain 3 where the MA
recursion explodes (the chain never moves: R-hat 1.53 in ``docs/validation.md``'s 2026-12-02
row); screened, every chain moves and the draws agree with the reference. The starts are
reproducible from the seed and recorded (``backend_info["starts"]``); a model with an
improper prior is screened too; ``init_values``, a user's own kernel and a model with a
discrete latent site keep their own starts.
"""

from __future__ import annotations

import warnings

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _npy_helpers import criterion, pdb
from numpyro.infer import NUTS

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_mcmc._screened import DISCRETE, screened_starts

ARMA = "arma-arma11"


def _arma(seed: int = 0, **options):
    x, y = pdb.load_data(ARMA)
    loop = TrainingLoop(
        task=NumpyroTask(
            model=pdb.arma11, num_warmup=300, num_samples=300, num_chains=4, ordered=True
        ),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=seed,
        backend_options={"compilation_cache": "off", **options},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        op, info = loop.run()
    return op, info, [str(w.message) for w in caught]


def test_screened_starts_free_the_chain_numpyros_start_leaves_stuck():
    _, info, caught = _arma(init_strategy="uniform")
    assert info["starts"] is None
    assert any("chain(s) 3" in c and "never moved" in c for c in caught), caught
    # Named with its cause, measured at the end of warmup: a collapsed step far from the bulk.
    (stuck,) = [c for c in caught if "never moved" in c]
    assert "end of warmup" in stuck and "shrank the step" in stuck, stuck
    assert info["diagnostics"]["warmup_end"]["step_size"][3] < 1e-6, info["diagnostics"]

    op, info, caught = _arma()
    assert not any("never moved" in c for c in caught), caught
    assert set(info["starts"]) == {"mu", "phi", "theta", "sigma"}
    assert all(np.shape(v)[0] == 4 for v in info["starts"].values())
    assert info["diagnostics"]["stuck_chains"] == []
    # 300 draws a chain: the reference's means, and chains that agree.
    for row in criterion(op.samples_by_chain, ARMA):
        assert row["z"] < 4 and row["r_hat"] < 1.05, row


def test_the_starts_are_the_seeds_own():
    x, y = (jnp.asarray(a) for a in pdb.load_data(ARMA))
    first = screened_starts(pdb.arma11, (x, y), {}, 0, 4).starts
    again = screened_starts(pdb.arma11, (x, y), {}, 0, 4).starts
    other = screened_starts(pdb.arma11, (x, y), {}, 1, 4).starts
    assert first is not None and other is not None and again is not None
    for site in first:
        assert np.asarray(first[site]).tobytes() == np.asarray(again[site]).tobytes()
    assert any(not np.array_equal(first[s], other[s]) for s in first)


def test_a_model_with_an_improper_prior_is_screened_too():
    # posteriordb's mixture: ordered means under an ImproperUniform, which cannot be sampled;
    # the screen traces the model with init_to_uniform's values, as NumPyro's init does.
    x, y = (jnp.asarray(a) for a in pdb.load_data("low_dim_gauss_mix-low_dim_gauss_mix"))
    starts = screened_starts(pdb.low_dim_gauss_mix, (x, y), {}, 0, 3).starts
    assert starts is not None and set(starts) == {"mu", "sigma", "theta"}
    assert np.shape(starts["mu"]) == (3, 2)


def _coin(x, y=None):
    p = numpyro.sample("p", dist.Beta(2.0, 2.0))
    z = numpyro.sample("z", dist.Bernoulli(p))  # a discrete latent site
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(z * 1.0, 1.0), obs=y)


def test_a_discrete_latent_site_leaves_numpyros_start():
    x = jnp.ones((5, 1))
    assert screened_starts(_coin, (x, jnp.zeros(5)), {}, 0, 2) == (None, DISCRETE)


@pytest.mark.parametrize("why", ["init_values", "own kernel"])
def test_the_users_own_starts_are_kept(why):
    x, y = pdb.load_data("eight_schools-eight_schools_noncentered")
    options = (
        {"init_values": {"mu": 1.0}}
        if why == "init_values"
        else {"kernel": NUTS(pdb.eight_schools, init_strategy=numpyro.infer.init_to_median)}
    )
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=20, num_samples=20, num_chains=2),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=0,
        backend_options={"compilation_cache": "off", **options},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = loop.run()
    assert info["starts"] is None


def test_a_screen_that_cannot_weigh_the_model_says_why_and_falls_back():
    from pipekit_train.adapters.numpyro_mcmc._run import _screened
    from pipekit_train.adapters.numpyro_mcmc._screened import Screened

    with pytest.warns(UserWarning, match=r"could not weigh.*TypeError: no zeros.*init_values"):
        assert _screened(Screened(None, "TypeError: no zeros")) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a discrete latent site is by design: no warning
        assert _screened(Screened(None, DISCRETE)) is None
        assert _screened(Screened({"mu": 1})) == {"mu": 1}
