"""numpyro-svi runs with every named autoguide and with a guide callable; the op's samples
hold the latent and deterministic sites, never the observed one."""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from numpyro.distributions import constraints

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import BACKEND_GUIDE_NAMES, GUIDE_NAMES, NumpyroTask

_rng = np.random.default_rng(1)
X = _rng.normal(size=(60, 2)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0]) + 0.3 * _rng.normal(size=60)).astype(np.float32)


def model(x, y=None, N=None):
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.deterministic("w_sum", w.sum())
    n = x.shape[0]
    with numpyro.plate("data", n if N is None else N, subsample_size=n):
        numpyro.sample("obs", dist.Normal(x @ w, sigma), obs=y)


def guide(x, y=None, N=None):
    loc = numpyro.param("loc", np.zeros(2, np.float32))
    scale = numpyro.param("scale", np.ones(2, np.float32), constraint=constraints.positive)
    numpyro.sample("w", dist.Normal(loc, scale).to_event(1))
    s = numpyro.param("s", np.float32(0.5), constraint=constraints.positive)
    numpyro.sample("sigma", dist.Delta(s))


@pytest.mark.parametrize("which", [*GUIDE_NAMES, *BACKEND_GUIDE_NAMES, "callable"])
def test_guide_runs(which: str) -> None:
    loop = TrainingLoop(
        task=NumpyroTask(
            model=model, guide=guide if which == "callable" else which, predictive_samples=30
        ),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=20,
        max_steps=300,
        optimizer_config={"name": "adam", "lr": 0.05},
        log_every_n_steps=100,
    )
    op, info = loop.run()
    assert set(op.samples) == {"w", "sigma", "w_sum"}
    assert op.samples["w"].shape == (30, 2)
    np.testing.assert_allclose(op.samples["w_sum"], op.samples["w"].sum(-1), rtol=1e-5)
    assert np.isfinite(info["final_elbo"])
    np.testing.assert_allclose(op.samples["w"].mean(0), [1.0, -2.0], atol=0.3)
