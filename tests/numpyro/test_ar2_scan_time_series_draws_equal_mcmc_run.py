"""NumPyro's ``ar2.py``: ``ar2_scan(y)``, an AR(2) series written with ``scan`` and
``handlers.condition``, takes ``dataset={"y": y}`` (its own argument name) and draws
bit-identically to the example's ``mcmc.run(rng_key, y=y)``. The observed site is the
model's own (``y``, conditioned by the handler), not a default name."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _npy_helpers import mcmc_run_starts
from numpyro.infer import MCMC, NUTS
from upstream_numpyro_examples import ar2_data, ar2_scan

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

W, S = 30, 30


def test_ar2_scan_draws_equal_mcmc_run() -> None:
    y = ar2_data(60)
    loop = TrainingLoop(
        task=NumpyroTask(model=ar2_scan, num_warmup=W, num_samples=S),
        dataset={"y": np.asarray(y)},
        backend="numpyro-mcmc",
        seed=0,
        backend_options={"x64": False},
    )
    with pytest.warns(UserWarning):  # so few draws: the ESS warning
        op, info = loop.run()
    ref = MCMC(NUTS(ar2_scan), num_warmup=W, num_samples=S, progress_bar=False)
    ref.run(jax.random.PRNGKey(0), y=y, init_params=mcmc_run_starts(info))
    want = ref.get_samples(group_by_chain=True)
    assert set(want) == set(op.samples_by_chain) == {"alpha_1", "alpha_2", "const", "sigma"}
    for site, value in want.items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site
    assert op.predictive_site == "y"
    assert info["draws_collected"] == S
