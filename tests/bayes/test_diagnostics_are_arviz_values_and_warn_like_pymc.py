"""Diagnostics equal ArviZ's own numbers; the warnings fire at PyMC's thresholds."""

import warnings

import numpy as np

from pipekit_train.adapters.bayes import diagnostic_warnings, diagnostics


def _az():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az
    return az


def test_values_are_arviz_rank_rhat_bulk_and_tail_ess() -> None:
    az = _az()
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 300))
    v = rng.normal(size=(4, 300, 3))
    diag = diagnostics({"a": a, "v": v})
    idata = az.from_dict(posterior={"a": a, "v": v})
    assert np.isclose(diag["sites"]["a"]["r_hat"], float(az.rhat(idata, method="rank")["a"]))
    assert np.isclose(diag["sites"]["a"]["ess_bulk"], float(az.ess(idata, method="bulk")["a"]))
    assert np.isclose(diag["sites"]["a"]["ess_tail"], float(az.ess(idata, method="tail")["a"]))
    np.testing.assert_allclose(diag["sites"]["v"]["r_hat"], az.rhat(idata, method="rank")["v"])
    assert np.isclose(diag["sites"]["a"]["sd"], a.ravel().std(ddof=1))
    assert diagnostic_warnings(diag) == []


def test_disagreeing_chains_low_ess_and_divergences_warn() -> None:
    rng = np.random.default_rng(2)
    shifted = rng.normal(size=(4, 300)) + np.arange(4)[:, None]
    sticky = np.repeat(rng.normal(size=(4, 10)), 30, axis=1)
    diverging = np.zeros((4, 300), bool)
    diverging[0, :2] = True
    msgs = diagnostic_warnings(diagnostics({"s": shifted, "k": sticky}, diverging))
    text = " | ".join(msgs)
    assert "R-hat above 1.01" in text and "s (" in text
    assert "k (" in text and "a bulk ESS below the 400 that 4 chains need (100 per chain)" in text
    assert "2 divergent transition(s)" in text
