"""A likelihood written with ``numpyro.factor`` samples (issue 25 item 2: it was refused,
"'obs' is not a sample site … its observed site(s): ['lik']"); the predictive op then says
it cannot draw predictions and why, while its draws and diagnostics work. A typo in
``predictive_site`` of a model with a real observed site is still refused."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

# The shared models live beside the bayes tests; this test needs several backends.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bayes"))
from _bayes_models import factor_normal, linreg, linreg_data  # noqa: E402


def test_factor_likelihood_recovers_the_conjugate_posterior() -> None:
    rng = np.random.default_rng(1)
    y = (1.5 + rng.normal(size=40)).astype(np.float32)
    loop = TrainingLoop(
        task=NumpyroTask(model=factor_normal, num_warmup=200, num_samples=400),
        dataset={"x": np.zeros((40, 1), np.float32), "y": y},
        backend="numpyro-mcmc",
        backend_options={"steps_per_call": 300},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, _ = loop.run()
    precision = 1 / 100 + 40
    mean, sd = float(y.sum()) / precision, precision**-0.5
    assert abs(float(op.samples["mu"].mean()) - mean) < 0.3 * sd
    assert "mu" in op.diagnostics()["sites"]
    with pytest.raises(ConfigError, match="numpyro.factor") as err:
        op(np.zeros((3, 1), np.float32))
    assert err.value.field == "task.predictive_site"


def test_a_misnamed_predictive_site_of_a_real_likelihood_is_still_refused() -> None:
    x, y = linreg_data(20)
    loop = TrainingLoop(
        task=NumpyroTask(model=linreg, predictive_site="ob"),
        dataset=(x, y),
        backend="numpyro-mcmc",
    )
    with pytest.raises(ConfigError, match="observed site"):
        loop.run()
