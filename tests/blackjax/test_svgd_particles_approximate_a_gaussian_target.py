"""SVGD runs through the driver with its own step meaning — one update of every particle per
driver step, then the final particles as the draws, one per chain and step — and on the 3-d
Gaussian the particles' mean and spread match the target's."""

from __future__ import annotations

import warnings

import numpy as np
from _bjx_helpers import SCALES, gauss_task, loop_for


def test_svgd_particles_match_the_gaussian_mean_and_scales() -> None:
    loop = loop_for(
        gauss_task(num_samples=150, num_chains=2),
        "svgd",
        options={"steps_per_call": 50, "num_updates": 200, "learning_rate": 0.1},
        log_every_n_steps=50,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    draws = op.samples_by_chain["position"]
    assert draws.shape == (2, 150, 3)
    assert info["phases"] == {"updates": 200, "sampling": 150}
    assert "SVGD update" in info["step_meaning"]
    assert {"length_scale", "mean_logdensity"} <= set(info["final_metrics"])
    for chain in draws:  # each chain is its own particle set
        np.testing.assert_allclose(chain.mean(0), [1.0, -1.0, 0.5], atol=0.1)
        np.testing.assert_allclose(chain.std(0), SCALES, rtol=0.2)
    assert np.unique(draws[0, :, 0]).size == 150  # the draws are the distinct final particles
