"""sgld / sghmc on a ``NumpyroTask``: the model's ``N`` is bound to the dataset size, so a
minibatch's log density is the prior plus N/B times its likelihood, the very gradient
BlackJAX's ``grad_estimator`` gives the raw path; and a run samples the (analytic, Gaussian)
posterior of the same regression as the raw SG test, with the same loose, stated bounds."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _bjx_helpers import (
    SG_CASES,
    assert_recovers_regression,
    loglik,
    logprior,
    loop_for,
    regression_data,
)

from pipekit_train.adapters.bayes import (
    NumpyroTask,
    bind_data_size,
    minibatch_log_density_from_model,
)

X, Y = regression_data()


def regression(x, y=None, N=None):
    """beta ~ Normal(0, 10); y ~ Normal(x @ beta, 0.5), its plate scaled to N rows."""
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([x.shape[1]]).to_event(1))
    with numpyro.plate("data", x.shape[0] if N is None else N, subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, 0.5), obs=y)


def test_minibatch_gradient_is_the_raw_grad_estimator() -> None:
    from blackjax.sgmcmc.gradients import grad_estimator

    batch_size = 16
    model = bind_data_size(regression, len(X), batch_size)
    target = minibatch_log_density_from_model(
        model,
        jnp.asarray(X),
        jnp.asarray(Y),
        batch_size,
        rng_key=jax.random.PRNGKey(0),
        num_chains=2,
    )
    # One start per chain, each its own.
    starts = np.asarray(target.init_position["beta"])
    assert starts.shape == (2, 2) and not np.allclose(starts[0], starts[1])
    raw = grad_estimator(logprior, loglik, len(X))
    beta = jnp.array([0.7, -0.3])
    for lo in (0, 16, 48):
        batch = {
            "x": jnp.asarray(X[lo : lo + batch_size]),
            "y": jnp.asarray(Y[lo : lo + batch_size]),
        }
        ours = jax.grad(target.logdensity_fn)({"beta": beta}, batch)["beta"]
        np.testing.assert_allclose(ours, raw(beta, batch), rtol=1e-5)
    # Averaged over a partition of the rows, the minibatch log density is the full one.
    parts = [
        target.logdensity_fn(
            {"beta": beta}, {"x": X[i : i + batch_size], "y": Y[i : i + batch_size]}
        )
        for i in range(0, len(X), batch_size)
    ]
    full = minibatch_log_density_from_model(
        bind_data_size(regression, len(X), len(X)),
        X,
        Y,
        len(X),
        rng_key=jax.random.PRNGKey(0),
        num_chains=1,
    ).logdensity_fn({"beta": beta}, {"x": X, "y": Y})
    np.testing.assert_allclose(np.mean(parts), full, rtol=1e-5)


@pytest.mark.parametrize(("sampler", "options"), SG_CASES)
def test_numpyro_model_recovers_the_posterior(sampler: str, options: dict) -> None:
    task = NumpyroTask(model=regression, num_warmup=100, num_samples=300, num_chains=2)
    loop = loop_for(
        task,
        sampler,
        options={"steps_per_call": 50, **options},
        dataset=(X, Y),
        batch_size=16,
        log_every_n_steps=50,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    draws = op.samples["beta"]
    assert draws.shape == (600, 2)
    assert_recovers_regression(draws, X, Y)
    assert info["phases"] == {"warmup": 100, "sampling": 300}
    # The artifact predicts through the NumPyro model (posterior predictive of obs).
    pred = np.asarray(op(X[:5]))
    assert pred.shape == (5,) and np.all(np.isfinite(pred))
