"""The fitted-guide checks of ``bayes._variational_health``, on numbers whose answer is known.

PSIS k-hat and the smoothed weights equal ArviZ's ``psislw`` (computed in NumPy so a whole
run imports no ArviZ); a guide equal to the target has small k-hat and no collapsed sd,
a too-narrow one is flagged; the ELBO counts as still moving only when the last tenth of
the logged windows improves on the tenth before by more than its noise and 0.1 % of its
size; fewer than four windows are not judged.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pipekit_train.adapters.bayes import _variational_health as vh
from pipekit_train.adapters.bayes import (
    elbo_convergence,
    importance_check,
    variational_warnings,
)
from pipekit_train.adapters.bayes._stats import psislw

_RNG = np.random.default_rng(0)
_CASES = {
    "light tail": _RNG.normal(size=1000),
    "heavy tail": _RNG.standard_t(2, size=1000),
    "wide": 5 * _RNG.normal(size=1000),
    "one outlier": np.r_[_RNG.normal(size=999), 30.0],
    "few draws": _RNG.normal(size=40),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_psislw_equals_arviz(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az
    lw = _CASES[name]
    expected, k_expected = az.psislw(lw.copy())
    got, k = psislw(lw)
    assert k == pytest.approx(k_expected, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-9, atol=1e-12)


def _normal_logpdf(z, sd):
    return -0.5 * (z / sd) ** 2 - np.log(sd)


def test_a_guide_equal_to_the_target_has_small_khat_and_no_collapsed_sd():
    z = _RNG.normal(size=4000)
    out = importance_check(_normal_logpdf(z, 1.0) - _normal_logpdf(z, 1.0) + 1e-9 * z, {"z": z})
    assert out["khat"] < 0.5 and out["narrow"] == {} and out["nonfinite"] == 0
    assert variational_warnings({"importance": out}) == []


def test_a_too_narrow_guide_is_flagged_by_khat_or_by_its_sd(monkeypatch):
    z = 0.3 * _RNG.normal(size=4000)  # the guide: sd 0.3 against a target sd 1
    out = importance_check(_normal_logpdf(z, 1.0) - _normal_logpdf(z, 0.3), {"z": z})
    assert out["khat"] > vh.KHAT_MAX
    assert "Pareto k-hat" in variational_warnings({"importance": out})[0]
    # A milder one (sd 0.8 against 1): k-hat passes, the weighted sd says it is narrower.
    z = 0.8 * _RNG.normal(size=(4000, 2))
    out = importance_check((_normal_logpdf(z, 1.0) - _normal_logpdf(z, 0.8)).sum(axis=1), {"v": z})
    assert out["khat"] <= vh.KHAT_MAX and out["narrow"] == {}
    monkeypatch.setattr(vh, "SD_RATIO_MIN", 0.95)
    out = importance_check((_normal_logpdf(z, 1.0) - _normal_logpdf(z, 0.8)).sum(axis=1), {"v": z})
    assert set(out["narrow"]) == {"v[0]", "v[1]"}
    assert all(0.7 < r < 0.95 for r in out["narrow"].values())
    (msg,) = variational_warnings({"importance": out})
    assert "sds collapsed for v[" in msg and "AutoMultivariateNormal" in msg


def test_a_guide_draw_outside_the_models_support_is_an_infinite_khat():
    lw = np.r_[_RNG.normal(size=99), -np.inf]
    out = importance_check(lw, {"z": np.zeros(100)})
    assert out["khat"] is None and out["nonfinite"] == 1
    (msg,) = variational_warnings({"importance": out})
    assert "is infinite" in msg and "1 of 100 guide draws" in msg


def _history(values):
    return [(50 * (i + 1), float(v)) for i, v in enumerate(values)]


def test_a_flat_noisy_elbo_has_converged_and_a_falling_one_is_still_moving():
    rng = np.random.default_rng(0)  # 3-se test: ~0.4 % of flat series read as moving
    flat = 100.0 + rng.normal(scale=0.5, size=60)
    conv = elbo_convergence(_history(flat))
    assert conv["checked"] and not conv["moving"]
    assert (conv["from_step"], conv["to_step"]) == (50 * 49, 50 * 60)
    falling = 100.0 + np.linspace(30.0, 0.0, 60) + rng.normal(scale=0.5, size=60)
    conv = elbo_convergence(_history(falling))
    assert conv["moving"] and conv["improvement"] > 3 * conv["improvement_se"]
    assert "ELBO is still moving" in variational_warnings({"elbo_convergence": conv})[0]


def test_a_drift_below_a_thousandth_of_the_loss_is_not_moving():
    # Noise-free, so any fall beats its standard error: only the relative tolerance decides.
    tiny = 1e5 - np.linspace(0.0, 5.0, 60)  # 0.5 over the last tenth: 5e-6 of 1e5
    assert not elbo_convergence(_history(tiny))["moving"]
    assert elbo_convergence(_history(1e5 - np.linspace(0.0, 5e3, 60)))["moving"]


def test_fewer_than_four_windows_are_not_judged():
    assert elbo_convergence(_history([3.0, 2.0, 1.0])) == {"checked": False, "windows": 3}
    assert elbo_convergence(_history([np.nan] * 10))["checked"] is False


def test_a_guide_that_stopped_short_is_told_where_and_a_full_rank_one_is_not_told_to_be_richer():
    # The guide: N(0, 1) on "b" and on "c"; the target: N(3, 1) on "b" (a fit that stopped three
    # sds short, as a badly scaled intercept does), N(0, 1) on "c".
    z = _RNG.normal(size=(4000, 2))
    lw = _normal_logpdf(z[:, 0] - 3.0, 1.0) - _normal_logpdf(z[:, 0], 1.0)
    out = importance_check(lw, {"b": z[:, 0], "c": z[:, 1]})
    assert out["khat"] > vh.KHAT_MAX and list(out["shifted"]) == ["b"]
    assert out["shifted"]["b"] > 2.0
    (msg,) = variational_warnings({"importance": out, "guide": "AutoNormal"})
    assert "move the means of b by" in msg and "stopped short" in msg, msg
    assert "init_to_value" in msg and "AutoMultivariateNormal" in msg, msg
    # The same finding for a full-rank guide: its fix is not the guide it already is.
    (msg,) = variational_warnings({"importance": out, "guide": "AutoMultivariateNormal"})
    assert "use a richer guide" not in msg and "numpyro-mcmc" in msg, msg
    assert "cannot do better than AutoMultivariateNormal" in msg, msg


def test_a_guide_mean_off_its_trusted_weighted_mean_is_warned_and_a_right_one_is_not():
    # k-hat passes (a 0.5-sd shift of a unit normal), so the weighted mean is trusted: the
    # guide's mean half an sd off it is a fit that ended off the optimum (what the other checks
    # pass: sblri-blr at defaults ended 0.36 reference sds off with k-hat 0.17).
    z = _RNG.normal(size=(4000, 2))
    lw = _normal_logpdf(z[:, 0] - 0.5, 1.0) - _normal_logpdf(z[:, 0], 1.0)
    out = importance_check(lw, {"b": z[:, 0], "c": z[:, 1]})
    assert out["khat"] <= vh.KHAT_MAX and list(out["off_mean"]) == ["b"], out
    assert out["shifted"] == {} and 0.35 < out["off_mean"]["b"] < 0.65
    (msg,) = variational_warnings({"importance": out})
    assert "sit off their importance-weighted means for b" in msg and "schedule" in msg, msg
    # A guide equal to the target: its means are its weighted means within their noise.
    same = importance_check(1e-9 * z[:, 0], {"b": z[:, 0], "c": z[:, 1]})
    assert same["off_mean"] == {} and variational_warnings({"importance": same}) == []
    # A point-mass component (AutoDelta, a callable guide's fixed site) has no spread to judge.
    point = importance_check(0.1 * z[:, 0], {"b": z[:, 0], "p": np.zeros(4000)})
    assert "p" not in point["off_mean"] and "p" not in point["shifted"]
