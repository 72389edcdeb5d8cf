"""SGLD and SGHMC on minibatches of the shared batch source sample the (analytic, Gaussian)
posterior of a two-coefficient regression: the means agree with it and the spread is of the
right size (SG-MCMC is biased by its step size and gradient noise: loose bounds, stated)."""

from __future__ import annotations

import warnings

import pytest
from _bjx_helpers import (
    SG_CASES,
    assert_recovers_regression,
    loop_for,
    regression_data,
    regression_task,
)

X, Y = regression_data()


@pytest.mark.parametrize(("sampler", "options"), SG_CASES)
def test_minibatch_sampler_recovers_the_posterior(sampler: str, options: dict) -> None:
    task = regression_task(num_warmup=100, num_samples=300, num_chains=2)
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
    draws = op.samples["position"]
    assert draws.shape == (600, 2)
    assert_recovers_regression(draws, X, Y)
    assert info["final_step"] == 400 and info["phases"] == {"warmup": 100, "sampling": 300}
    # The step-size schedule reached the metric stream: step_size * (1 + t) ** -power.
    expected = options["step_size"] * 400.0 ** -options.get("step_size_power", 0.0)
    assert info["final_metrics"]["step_size"] == pytest.approx(expected, rel=1e-3)
