"""A site of size zero (a regression's coefficients over no covariates) is summarised, not
crashed on.

A modeller who drops every covariate keeps ``beta ~ Normal(0, 1).expand([x.shape[1]])`` with
``x.shape[1] == 0``: NumPyro samples it (an empty array per draw). Before, the run's
diagnostics raised ``ValueError: cannot reshape array of size 0`` after sampling, so the draws
were lost; now the empty site gets empty figures, the other sites their usual ones, and the
operator predicts, saves and loads.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroPredictiveOp, NumpyroTask


def regression(x, y=None):
    a = numpyro.sample("a", dist.Normal(0.0, 5.0))
    beta = numpyro.sample("beta", dist.Normal(0.0, 1.0).expand([x.shape[1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("y", dist.Normal(a + x @ beta, sigma), obs=y)


@pytest.mark.parametrize("backend", ["numpyro-mcmc", "numpyro-svi"])
def test_an_empty_site_gets_empty_figures_and_the_op_round_trips(
    backend: str, tmp_path: Path
) -> None:
    rng = np.random.default_rng(0)
    x = np.zeros((40, 0), np.float32)
    y = (1.0 + rng.normal(size=40)).astype(np.float32)
    task = NumpyroTask(model=regression, num_warmup=60, num_samples=60, num_chains=2)
    with warnings.catch_warnings():  # short chains may warn on ESS: not what is tested
        warnings.simplefilter("ignore")
        op, info = TrainingLoop(
            backend=backend, task=task, dataset={"x": x, "y": y}, max_steps=100, batch_size=40
        ).run()
    sites = info["diagnostics"]["sites"]
    assert sites["beta"]["mean"] == [] and sites["beta"]["sd"] == []
    assert np.isfinite(sites["a"]["mean"]) and np.isfinite(sites["sigma"]["sd"])
    assert op.samples["beta"].shape[-1] == 0
    op.save(tmp_path / "op")
    loaded = NumpyroPredictiveOp.load(tmp_path / "op", model=regression)
    np.testing.assert_array_equal(loaded(x[:3]), op(x[:3]))
