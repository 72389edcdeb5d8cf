"""The end-of-run diagnostics are computed in NumPy (no ArviZ, xarray or pandas import),
and every figure equals ArviZ's own to floating-point tolerance, on awkward draws too:
one chain, an odd draw count, ties, a constant site, NaN, float32, autocorrelation."""

import subprocess
import sys
import warnings

import numpy as np
import pytest

from pipekit_train.adapters.bayes import diagnostics, variational_summary
from pipekit_train.adapters.bayes._stats import bfmi, ndtri


def _az():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import arviz as az
    return az


def _ar1(rng, chains, draws, phi, shape=()):
    e = rng.normal(size=(chains, draws, *shape))
    out = np.empty_like(e)
    out[:, 0] = e[:, 0]
    for t in range(1, draws):
        out[:, t] = phi * out[:, t - 1] + e[:, t]
    return out


def _cases():
    rng = np.random.default_rng(0)
    return {
        "iid 4 chains": {"a": rng.normal(size=(4, 300)), "v": rng.normal(size=(4, 300, 2, 3))},
        "autocorrelated, odd draws": {"a": _ar1(rng, 3, 251, 0.9), "b": _ar1(rng, 3, 251, -0.3)},
        "one chain": {"a": _ar1(rng, 1, 400, 0.5, (2,))},
        "float32 and ties": {
            "a": rng.normal(size=(2, 200)).astype(np.float32),
            "k": rng.integers(0, 4, size=(2, 200)).astype(float),
        },
        "shifted chains": {"s": rng.normal(size=(4, 100)) + np.arange(4)[:, None]},
        "constant and nan": {
            "c": np.full((2, 50), 1.5),
            "n": np.where(np.arange(100).reshape(2, 50) == 7, np.nan, 1.0)
            * rng.normal(size=(2, 50)),
        },
        "too few draws": {"a": rng.normal(size=(2, 3))},
    }


def _close(ours, theirs):
    np.testing.assert_allclose(
        np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float), rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("case", list(_cases()))
def test_every_figure_equals_arvizs(case: str) -> None:
    az = _az()
    samples = _cases()[case]
    diag = diagnostics(samples)
    post = az.from_dict(posterior=samples).posterior
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = {
            "r_hat": az.rhat(post, method="rank"),
            "ess_bulk": az.ess(post, method="bulk"),
            "ess_tail": az.ess(post, method="tail"),
            "mcse_mean": az.mcse(post, method="mean"),
        }
        hdi = az.hdi(post, hdi_prob=0.94) if samples[next(iter(samples))].shape[1] > 1 else None
    for name in samples:
        site = diag["sites"][name]
        for key, ref in theirs.items():
            _close(site[key], ref[name])
        if hdi is not None and not np.isnan(samples[name]).any():
            _close(site["hdi_low"], np.asarray(hdi[name])[..., 0])
            _close(site["hdi_high"], np.asarray(hdi[name])[..., 1])


def test_variational_summary_hdi_equals_arvizs() -> None:
    az = _az()
    rng = np.random.default_rng(3)
    samples = {"w": rng.normal(size=(1, 500, 4)), "s": rng.gamma(2.0, size=(1, 500))}
    summary = variational_summary(samples)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hdi = az.hdi(az.from_dict(posterior=samples).posterior, hdi_prob=0.94)
    for name in samples:
        _close(summary["sites"][name]["hdi_low"], np.asarray(hdi[name])[..., 0])
        _close(summary["sites"][name]["hdi_high"], np.asarray(hdi[name])[..., 1])


def test_e_bfmi_equals_arvizs() -> None:
    energy = _ar1(np.random.default_rng(4), 3, 300, 0.8)
    _close(bfmi(energy), _az().bfmi(energy))


def test_normal_quantile_equals_scipys() -> None:
    from scipy.special import ndtri as scipy_ndtri

    p = np.r_[0.0, 1e-300, 1e-12, 0.0123, np.linspace(0.01, 0.99, 999), 0.97, 1 - 1e-12, 1.0]
    np.testing.assert_allclose(ndtri(p), scipy_ndtri(p), rtol=1e-14, atol=0)
    assert np.isnan(ndtri(np.array([-0.1, 1.1, np.nan]))).all()


def test_diagnostics_import_no_arviz_xarray_or_pandas() -> None:
    code = (
        "import sys, numpy as np\n"
        "from pipekit_train.adapters.bayes import diagnostics, variational_summary, "
        "warn_diagnostics\n"
        "rng = np.random.default_rng(0)\n"
        "d = diagnostics({'a': rng.normal(size=(2, 100))}, np.zeros((2, 100), bool), "
        "sample_stats={'energy': rng.normal(size=(2, 100)), 'tree_depth': np.ones((2, 100))},"
        " max_tree_depth=10)\n"
        "warn_diagnostics(d, 'x'); variational_summary({'a': rng.normal(size=(1, 50))})\n"
        "print(sorted(m for m in ('arviz', 'xarray', 'pandas', 'scipy.stats') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
