"""NumPyro's ``funnel.py``: ``model(dim=10)`` takes no data, and the blackjax backend runs it
with no ``dataset`` (``sampler: nuts``), centred and as the example's
``reparam(model, config={"x": LocScaleReparam(0)})``.

The reparametrised funnel is compared with the example's own ``MCMC(NUTS(reparam_model))
.run(key)`` (float32, 200 warmup + 500 draws of one chain; independent keys, so MCSE units,
not bits): every parameter's mean within 3 combined MCSE, and the sd of ``y`` and
``x_decentered`` (normal: N(0, 3) and N(0, 1)) within 20 %; ``x``'s sd is not compared, its
marginal has tails (scale ``exp(y / 2)``) that 500 draws do not pin down. The centred funnel
is not compared in MCSE units: NUTS does not reach its neck, so the MCSE of either run is no
yardstick (measured over 5 seeds: the sd of ``y`` 0.63-1.44 times NumPyro's); it is run for
the form — no dataset, the same sites as ``MCMC.run``, and an op that says it cannot predict.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _bjx_direct import mcse_gaps
from _bjx_helpers import compilation_cache_dir
from numpyro.infer import MCMC, NUTS
from upstream_numpyro_examples import model, reparam_model

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

WARMUP, DRAWS = 200, 500


def _run(fn, warmup: int, draws: int):  # noqa: ANN001, ANN202 - a test's small helper
    task = NumpyroTask(model=fn, num_warmup=warmup, num_samples=draws)
    assert task.needs_dataset is False
    return TrainingLoop(
        task=task,
        backend="blackjax",
        seed=0,
        backend_options={
            "sampler": "nuts",
            "x64": False,  # MCMC.run below runs in the process default
            "steps_per_call": draws,  # one compiled chunk per phase
            "compilation_cache": compilation_cache_dir(),
        },
    ).run()


def test_reparametrised_funnel_without_a_dataset_agrees_with_mcmc_run() -> None:
    op, info = _run(reparam_model, WARMUP, DRAWS)
    ref = MCMC(NUTS(reparam_model), num_warmup=WARMUP, num_samples=DRAWS, progress_bar=False)
    ref.run(jax.random.PRNGKey(0))
    theirs = ref.get_samples(group_by_chain=True)

    assert set(op.samples_by_chain) == set(theirs) == {"x", "x_decentered", "y"}
    gaps = mcse_gaps(op.samples_by_chain, theirs)
    assert len(gaps) == 1 + 2 * 9
    for name, gap in gaps.items():
        assert gap["z"] < 3.0, gaps
        if not name.startswith("x["):
            assert 0.8 < gap["sd_ratio"] < 1.25, (name, gaps)
    # The funnel's own answer: y ~ N(0, 3).
    y = op.samples_by_chain["y"]
    assert abs(float(np.mean(y))) < 0.6 and 2.4 < float(np.std(y)) < 3.6
    assert info["divergences"] == 0
    assert op.predictive_site is None


def test_centred_funnel_runs_without_a_dataset_with_mcmc_runs_sites() -> None:
    with pytest.warns(UserWarning):  # the centred funnel's divergences and low ESS
        op, _ = _run(model, 50, 50)
    ref = MCMC(NUTS(model), num_warmup=5, num_samples=5, progress_bar=False)
    ref.run(jax.random.PRNGKey(0))
    theirs = ref.get_samples(group_by_chain=True)
    assert {k: v.shape[2:] for k, v in op.samples_by_chain.items()} == {
        k: v.shape[2:] for k, v in theirs.items()
    }
    assert op.samples_by_chain["x"].shape == (1, 50, 9)
    assert np.all(np.isfinite(op.samples_by_chain["y"]))
    with pytest.raises(ConfigError, match="observes no site") as err:
        op()
    assert err.value.field == "task.predictive_site"
