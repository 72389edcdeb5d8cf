"""numpyro-mcmc with ``compilation_cache`` at a folder of user files deletes none of them.

Issue 24: a numpyro-mcmc run that *failed validation* had already pruned the folder (the
bound's pruning ran first), deleting ``train_data_2019.csv`` and ``features.bin``. Now the
folder, not created or marked by pipekit, is never pruned, and pruning waits for a
successful run anyway. A two-parameter model and a few draws keep the successful run cheap.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from user_files import assert_untouched, plant

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import DataError
from pipekit_train.jax.compile_cache import MAX_BYTES_ENV

X = np.zeros((20, 1), np.float32)
Y = np.random.default_rng(0).normal(1.0, 0.5, size=20).astype(np.float32)


def location(x: Any, y: Any = None) -> None:
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(mu, sigma), obs=y)


def _loop(folder, dataset) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=location, num_warmup=20, num_samples=20),
        dataset=dataset,
        backend="numpyro-mcmc",
        backend_options={"compilation_cache": str(folder)},
    )


@pytest.fixture(autouse=True)
def _tiny_bound(monkeypatch):
    monkeypatch.setenv(MAX_BYTES_ENV, "1")  # any pruning at all would delete everything


def test_a_run_failing_validation_leaves_the_users_files(tmp_path):
    folder = tmp_path / "my_data"
    files = plant(folder)
    bad = Y.copy()
    bad[3] = np.nan
    with pytest.warns(UserWarning, match="never pruned"), pytest.raises(DataError, match="NaN"):
        _loop(folder, {"x": X, "y": bad}).run()  # a NaN: refused before anything compiles
    assert_untouched(folder, files)


@pytest.mark.filterwarnings("ignore:numpyro-mcmc. bulk ESS")  # 20 draws, on purpose
def test_a_successful_run_leaves_the_users_files(tmp_path):
    folder = tmp_path / "my_data"
    files = plant(folder)
    with pytest.warns(UserWarning, match="never pruned"):
        op, info = _loop(folder, {"x": X, "y": Y}).run()
    assert op is not None and info["draws_collected"] == 20
    assert_untouched(folder, files)
