"""Adaptive tempered SMC runs through the driver with its own step meaning — one tempering step
per driver step until λ = 1, then reported no-ops, one resampling step, one draw per chain and
step — and on the 3-d Gaussian its resampled particles recover the mean and the scales, with
λ, ESS and the HMC acceptance streamed as per-step metrics. A budget too small to reach λ = 1
warns instead of passing tempered draws off as the posterior."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _bjx_helpers import SCALES, gauss_task, loop_for

from pipekit_train import Callback


class _Tempering(Callback):
    """The per-step metrics of the tempering phase, as the metric writer sees them."""

    def __init__(self) -> None:
        self.rows: list[dict[str, np.ndarray]] = []

    def on_step_end(self, loop, state) -> None:
        if state.phase == "tempering":
            self.rows.append({k: np.asarray(v) for k, v in state.window.items()})


def test_smc_recovers_the_gaussian_and_reports_lambda_ess_acceptance() -> None:
    rec = _Tempering()
    loop = loop_for(
        gauss_task(num_samples=300, num_chains=2),
        "smc",
        options={"steps_per_call": 5, "init_scale": 2.0, "max_tempering_steps": 10},
        log_every_n_steps=1,
        callbacks=[rec],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    draws = op.samples_by_chain["position"]
    assert draws.shape == (2, 300, 3)
    assert info["phases"] == {"tempering": 10, "resample": 1, "sampling": 300}
    assert "tempering step" in info["step_meaning"]
    assert info["adapted"]["lmbda"] == [1.0, 1.0]
    used = info["adapted"]["tempering_steps"]
    assert all(1 <= n < 10 for n in used)  # adaptive: fewer than the budget, the rest no-ops
    flat = draws.reshape(-1, 3)
    np.testing.assert_allclose(flat.mean(0), [1.0, -1.0, 0.5], atol=0.4)
    np.testing.assert_allclose(flat.std(0), SCALES, rtol=0.25)
    # The per-step metrics: λ rises to 1, then the budget's remaining steps are no-ops.
    lmbda = np.concatenate([r["lmbda"].reshape(-1, 2) for r in rec.rows])
    active = np.concatenate([r["active"].reshape(-1, 2) for r in rec.rows])
    assert lmbda.shape == (10, 2) and np.all(np.diff(lmbda, axis=0) >= 0)
    assert np.all(lmbda[-1] == 1.0) and np.all(active.sum(0) == used)
    acc = np.concatenate([r["acceptance_rate"].reshape(-1, 2) for r in rec.rows])
    assert np.all(acc[active == 1] > 0.3) and np.all(acc[active == 0] == 0)
    ess = np.concatenate([r["ess"].reshape(-1, 2) for r in rec.rows])
    assert np.all((ess > 1) & (ess <= 300 + 1e-3))


def test_a_tempering_budget_that_ends_before_lambda_1_warns() -> None:
    loop = loop_for(
        gauss_task(num_samples=40, num_chains=1),
        "smc",
        options={"max_tempering_steps": 1, "target_ess": 0.95, "init_scale": 0.3},
    )
    with pytest.warns(UserWarning, match="tempering stopped at λ"):
        op, info = loop.run()
    assert info["adapted"]["lmbda"][0] < 1.0
    assert any("tempered target" in m for m in info["warnings"])
