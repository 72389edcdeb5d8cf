"""NumPyro's ``funnel.py``: ``model(dim=10)`` takes no data, and runs with no ``dataset``.

Both the centred model and ``reparam(model, config={"x": LocScaleReparam(0)})`` (a handler,
not a function) draw bit-identically to the example's own ``MCMC(NUTS(model)).run(key)``.
The model observes nothing, so the op holds the posterior and says why it cannot predict.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _npy_helpers import mcmc_run_starts
from numpyro.infer import MCMC, NUTS
from upstream_numpyro_examples import model, reparam_model

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

W, S = 30, 30


@pytest.mark.parametrize(
    ("fn", "sites"),
    [(model, {"x", "y"}), (reparam_model, {"x", "x_decentered", "y"})],
    ids=["centred", "LocScaleReparam"],
)
def test_funnel_runs_without_a_dataset_like_mcmc_run(fn, sites) -> None:
    task = NumpyroTask(model=fn, num_warmup=W, num_samples=S)
    assert task.needs_dataset is False
    loop = TrainingLoop(task=task, backend="numpyro-mcmc", seed=4, backend_options={"x64": False})
    with pytest.warns(UserWarning):  # so few draws (and the centred funnel's divergences)
        op, info = loop.run()
    ref = MCMC(NUTS(fn), num_warmup=W, num_samples=S, progress_bar=False)
    ref.run(jax.random.PRNGKey(4), init_params=mcmc_run_starts(info))
    want = ref.get_samples(group_by_chain=True)
    assert set(want) == set(op.samples_by_chain) == sites
    for site, value in want.items():
        assert op.samples_by_chain[site].tobytes() == np.asarray(value).tobytes(), site
    assert op.predictive_site is None
    with pytest.raises(ConfigError, match="observes no site") as err:
        op()
    assert err.value.field == "task.predictive_site"
