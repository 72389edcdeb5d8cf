"""SGLD and SGHMC on minibatches of the shared batch source sample the (analytic, Gaussian)
posterior of a two-coefficient regression: the means agree with it and the spread is of the
right size (SG-MCMC is biased by its step size and gradient noise: loose bounds, stated)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _bjx_helpers import loop_for, regression_data, regression_task

X, Y = regression_data()


def _analytic() -> tuple[np.ndarray, np.ndarray]:
    """Posterior of beta ~ N(0, 10^2 I), y ~ N(X beta, 0.5^2): mean and sds."""
    x, y = X.astype(np.float64), Y.astype(np.float64)
    precision = x.T @ x / 0.25 + np.eye(2) / 100.0
    cov = np.linalg.inv(precision)
    return cov @ (x.T @ y / 0.25), np.sqrt(np.diag(cov))


@pytest.mark.parametrize(
    ("sampler", "options"),
    [
        ("sgld", {"step_size": 2e-3, "step_size_power": 0.1}),
        ("sghmc", {"step_size": 0.005, "num_integration_steps": 10}),
    ],
)
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
    mean, sd = _analytic()
    assert draws.shape == (600, 2)
    assert np.all(np.abs(draws.mean(0) - mean) < 5 * sd + 0.05), (draws.mean(0), mean, sd)
    assert np.all((draws.std(0) > 0.3 * sd) & (draws.std(0) < 4 * sd)), (draws.std(0), sd)
    assert info["final_step"] == 400 and info["phases"] == {"warmup": 100, "sampling": 300}
    # The step-size schedule reached the metric stream: step_size * (1 + t) ** -power.
    expected = options["step_size"] * 400.0 ** -options.get("step_size_power", 0.0)
    assert info["final_metrics"]["step_size"] == pytest.approx(expected, rel=1e-3)
