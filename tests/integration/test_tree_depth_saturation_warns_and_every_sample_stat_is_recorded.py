"""A posterior that saturates NUTS's tree depth warns, naming the share of draws and the
option to raise (issue 25 item 3: 35 % of kilpisjarvi's draws hit max_tree_depth without a
word), on numpyro-mcmc and blackjax nuts; every per-draw statistic (tree depth, energy,
step size, leapfrog steps, acceptance, and divergences) reaches ``op.sample_stats`` and the
InferenceData, and the diagnostics carry E-BFMI per chain."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

# The shared models live beside the bayes tests; this test needs several backends.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bayes"))
from _bayes_models import correlated  # noqa: E402

OPTIONS: dict[str, dict[str, Any]] = {
    "numpyro-mcmc": {"max_tree_depth": 3, "steps_per_call": 200},
    "blackjax": {"max_num_doublings": 3, "steps_per_call": 200},
}
STATS = {"diverging", "tree_depth", "energy", "step_size", "n_steps", "acceptance_rate"}


@pytest.mark.parametrize("backend", sorted(OPTIONS))
def test_saturated_tree_depth_warns_and_stats_are_kept(backend: str) -> None:
    loop = TrainingLoop(
        task=NumpyroTask(model=correlated, num_warmup=200, num_samples=200, num_chains=2),
        dataset={"x": np.zeros((4, 1), np.float32), "y": np.zeros(4, np.float32)},
        backend=backend,
        backend_options=OPTIONS[backend],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    msgs = [m for m in info["warnings"] if "maximum tree depth 3" in m]
    assert msgs and "max_tree_depth" in msgs[0], info["warnings"]
    diag = info["diagnostics"]
    assert diag["tree_depth_saturated"] > 0.5 * 400
    assert len(diag["e_bfmi"]) == 2 and all(np.isfinite(diag["e_bfmi"]))
    assert STATS <= set(op.sample_stats)
    assert all(op.sample_stats[k].shape == (2, 200) for k in STATS)
    assert int(op.sample_stats["tree_depth"].max()) == 3
    idata = op.to_inference_data()
    assert STATS <= set(idata.sample_stats.data_vars)
