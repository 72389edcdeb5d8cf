"""numpyro-svi refuses a latent site inside the plate its minibatches subsample, before SVI is
initialised, and keeps the two forms that are right: the full batch, and NumPyro's own
subsampling inside the model (whose PSIS check is skipped, named: each evaluation of its
density draws its own indices, so the importance weights are noise, k-hat ~28 measured).

With minibatches, ``numpyro.plate("data", N, subsample_size=x.shape[0])`` draws its own row
indices, not the batch's rows, so a local latent (one value per row) would be fitted to other
rows' data; the run used to train to the end and then fail in ``Predictive`` (the guide's
plate subsampled the batch's size on the full data: "Incompatible shapes for broadcasting").
"""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

RNG = np.random.default_rng(0)
N = 60
X = RNG.normal(size=(N, 1)).astype(np.float32)
Y = (1.0 + X[:, 0] + 0.5 * RNG.normal(size=N)).astype(np.float32)


def local_latent(x, y=None, N=None):
    """A per-row latent ``z`` in the data plate, minibatched the pipekit way (``N``)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("data", x.shape[0] if N is None else N, subsample_size=x.shape[0]):
        z = numpyro.sample("z", dist.Normal(mu, 1.0))
        numpyro.sample("obs", dist.Normal(z + x[:, 0], 0.5), obs=y)


def subsampled_in_the_model(x, y=None):
    """NumPyro's own form: the full data in, the plate's indices pick the rows."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("data", x.shape[0], subsample_size=20) as idx:
        z = numpyro.sample("z", dist.Normal(mu, 1.0))
        obs = None if y is None else y[idx]
        numpyro.sample("obs", dist.Normal(z + x[idx, 0], 0.5), obs=obs)


def _loop(model, batch_size: int) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=model, guide="AutoNormal", predictive_samples=50),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=batch_size,
        max_steps=50,
        seed=0,
    )


def test_a_local_latent_in_the_minibatched_plate_is_refused_before_svi_starts(
    monkeypatch,
) -> None:
    def boom(*a, **k):
        raise AssertionError("SVI was initialised (compiled) before the error was raised")

    monkeypatch.setattr(numpyro.infer.SVI, "init", boom)
    with pytest.raises(ConfigError) as info:
        _loop(local_latent, batch_size=20).run()
    assert info.value.field == "task.model"
    msg = str(info.value)
    for words in ("['z']", "'data'", "batch_size 20 of 60", "Set batch_size=60", "obs=y[idx]"):
        assert words in msg, msg


# 50 steps do not fit the guide (PSIS k-hat warns); what is checked is that it trains and draws.
@pytest.mark.filterwarnings("ignore:numpyro-svi. Pareto k-hat")
@pytest.mark.parametrize(
    ("model", "rows"),
    [(local_latent, N), (subsampled_in_the_model, 20)],
    ids=["full-batch", "numpyro-subsample"],
)
def test_the_full_batch_forms_of_a_local_latent_train_and_draw(model, rows) -> None:
    op, info = _loop(model, batch_size=N).run()
    assert info["final_step"] == 50
    z = np.asarray(op.samples["z"])
    assert z.shape[-1] == rows and np.all(np.isfinite(z))
    importance = info["diagnostics"]["importance"]
    if model is subsampled_in_the_model:
        assert "subsamples plate 'data' (20 of 60)" in importance["skipped"], importance
        assert not any("k-hat" in w for w in info["warnings"]), info["warnings"]
    else:
        assert importance["num_draws"] == 1000 and "skipped" not in importance
