"""Every sampler that reads the whole target runs ONE chain (``num_chains=1``) as it runs
several: one chain skips ``vmap`` (``_sampler.over_chains``), and a per-draw statistic that
BlackJAX returns as a Python number (hmc's ``num_integration_steps``) still gets its chain
axis. Before, hmc with one chain raised ``TypeError: 'int' object is not subscriptable``
during warmup.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _bjx_helpers import gauss_task, loop_for


@pytest.mark.parametrize("sampler", ["nuts", "hmc", "mclmc"])
def test_one_chain_samples_with_finite_draws_and_its_statistics(sampler: str) -> None:
    task = gauss_task(num_warmup=100, num_samples=30, num_chains=1)
    with warnings.catch_warnings():  # 30 draws: the short-chain ESS warning, not tested here
        warnings.simplefilter("ignore")
        op, info = loop_for(task, sampler, dataset=None).run()
    assert op.samples["position"].shape == (30, 3)
    assert np.isfinite(op.samples["position"]).all()
    assert np.all(op.samples["position"].std(axis=0) > 0)  # the chain moves
    # mclmc's Pathfinder start and whole tuner are a step each; the others take a step per
    # warmup draw
    assert info["final_step"] == (2 + 30 if sampler == "mclmc" else 100 + 30)
    assert info["diagnostics"]["divergences"] == 0
