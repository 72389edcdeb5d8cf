"""A sampler that diverged to NaN or infinity (SG-MCMC or MCLMC at too large a step size)
is reported: the diagnostics count the non-finite values per site and the warnings name the
site and the fix, rather than leaving a table of NaN statistics to puzzle over."""

import numpy as np

from pipekit_train.adapters.bayes import diagnostic_warnings, diagnostics


def test_nan_and_inf_draws_are_counted_per_site_and_warned() -> None:
    rng = np.random.default_rng(0)
    fine = rng.normal(size=(2, 200))
    broken = rng.normal(size=(2, 200, 3))
    broken[1, 150:, 0] = np.nan
    broken[0, 10, 2] = np.inf
    diag = diagnostics({"fine": fine, "broken": broken})
    assert diag["sites"]["fine"]["nonfinite"] == 0
    assert diag["sites"]["broken"]["nonfinite"] == 51
    msgs = diagnostic_warnings(diag)
    assert msgs and "NaN or infinite" in msgs[0] and "broken (51)" in msgs[0]
    assert "fine" not in msgs[0] and "step_size" in msgs[0]


def test_finite_draws_do_not_warn() -> None:
    diag = diagnostics({"a": np.random.default_rng(1).normal(size=(4, 300))})
    assert diag["sites"]["a"]["nonfinite"] == 0
    assert diagnostic_warnings(diag) == []
