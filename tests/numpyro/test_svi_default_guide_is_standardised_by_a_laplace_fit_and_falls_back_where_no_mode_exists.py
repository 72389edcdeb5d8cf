"""numpyro-svi's default guide (``task.guide=None``, issue 33 part 3): a full-rank Gaussian
whose parameters are standardised by a Laplace fit at the posterior's mode, so one learning
rate suits a badly scaled regression that NumPyro's ``AutoNormal`` misses at the same steps
(its health line says so); where there is no mode (a centred funnel) it is NumPyro's own
``AutoMultivariateNormal`` and ``backend_info["laplace"]`` says why; above ``MAX_DIM``
latent values it is ``AutoNormal``."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_svi._standardized import MAX_DIM
from pipekit_train.errors import ConfigError

_RNG = np.random.default_rng(7)
X = _RNG.uniform(90.0, 110.0, size=120).astype(np.float32)  # a raw-scale covariate
Y = (3.0 + 0.5 * X + _RNG.normal(0.0, 2.0, size=120)).astype(np.float32)


def ridge(x: Any, y: Any = None) -> None:
    """Intercept and slope correlated at about -0.999 (x is far from 0)."""
    a = numpyro.sample("a", dist.Normal(0.0, 100.0))
    b = numpyro.sample("b", dist.Normal(0.0, 10.0))
    s = numpyro.sample("s", dist.HalfNormal(10.0))
    numpyro.sample("obs", dist.Normal(a + b * x, s), obs=y)


def _ols() -> tuple[np.ndarray, np.ndarray]:
    """Least squares' coefficients and their sds (the near-flat priors' posterior)."""
    design = np.stack([np.ones_like(X), X], axis=1).astype(np.float64)
    coef, res, *_ = np.linalg.lstsq(design, Y.astype(np.float64), rcond=None)
    sigma2 = float(res[0]) / (len(X) - 2)
    cov = sigma2 * np.linalg.inv(design.T @ design)
    return coef, np.sqrt(np.diag(cov))


def _run(
    model: Any, data: Any, batch_size: int = len(X), loop_fields: Any = None, **task: Any
) -> tuple[Any, dict[str, Any], list[str]]:
    loop = TrainingLoop(
        **(loop_fields or {}),
        task=NumpyroTask(model=model, predictive_samples=2000, **task),
        dataset=data,
        backend="numpyro-svi",
        batch_size=batch_size,  # full batch (the models take no N)
        # max_steps and optimizer_config at the loop's defaults: 1,000 steps of SVI's
        # default schedule (Adam at 0.01, then cosine decay)
        log_every_n_steps=100,
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        op, info = loop.run()
    return op, info, [str(w.message) for w in caught]


def test_the_default_fits_a_badly_scaled_regression_that_autonormal_misses() -> None:
    coef, sd = _ols()
    op, info, warned = _run(ridge, (X, Y))
    assert info["guide"] == "AutoStandardizedMultivariateNormal"
    assert info["laplace"]["fitted"] is True, info["laplace"]
    assert set(info["params"]) == {"auto_standardized_loc", "auto_standardized_scale_tril"}
    schedule = info["optimizer"]["default_schedule"]  # optimizer_config left at the default
    assert schedule["name"] == "adam" and schedule["lr"]["peak_value"] == 0.01
    for name, mean, ref_sd in zip(("a", "b"), coef, sd, strict=True):
        draws = np.asarray(op.samples[name]).ravel()
        assert abs(float(draws.mean()) - mean) < 0.2 * ref_sd, (name, draws.mean(), mean)
        assert 0.8 < float(draws.std()) / ref_sd < 1.25, (name, draws.std(), ref_sd)
    assert np.corrcoef(np.ravel(op.samples["a"]), np.ravel(op.samples["b"]))[0, 1] < -0.99
    assert not info["warnings"], info["warnings"]  # the health line says OK
    assert not [w for w in warned if "numpyro-svi" in w], warned

    # NumPyro's AutoNormal, same steps and schedule: a mean-field guide on a -0.999
    # correlation, its sds a fraction of the posterior's, and the health line says so.
    op_n, info_n, _ = _run(ridge, (X, Y), guide="AutoNormal")
    assert info_n["guide"] == "AutoNormal" and "laplace" not in info_n
    assert float(np.std(op_n.samples["a"])) < 0.3 * sd[0], (np.std(op_n.samples["a"]), sd[0])
    assert any("Pareto k-hat" in w for w in info_n["warnings"]), info_n["warnings"]


def centred_schools(sigma: Any, y: Any = None) -> None:
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("J", sigma.shape[0]):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


def test_a_funnel_with_no_mode_runs_numpyros_full_rank_guide_and_says_why() -> None:
    sigma = np.array([15, 10, 16, 11, 9, 11, 10, 18], np.float32)
    y = np.array([28, 8, -3, 7, -1, 1, 18, 12], np.float32)
    _, info, _ = _run(centred_schools, {"sigma": sigma, "y": y})
    assert info["guide"] == "AutoStandardizedMultivariateNormal"
    laplace = info["laplace"]
    assert laplace["fitted"] is False and laplace["reason"], laplace  # log tau -> -inf
    assert np.isfinite(info["final_elbo"])


def wide(x: Any, y: Any = None) -> None:
    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([MAX_DIM + 1]).to_event(1))
    numpyro.sample("obs", dist.Normal(x * w.sum(), 1.0), obs=y)


def test_above_max_dim_the_default_is_autonormal() -> None:
    x = np.ones(16, np.float32)
    sgd = {"name": "sgd", "lr": 0.01}
    _, info, _ = _run(wide, (x, x), batch_size=len(x), loop_fields={"optimizer_config": sgd})
    assert info["guide"] == "AutoNormal"
    assert "optimizer" not in info  # the user's optimiser, as given
    assert set(info["params"]) == {"w_auto_loc", "w_auto_scale"}  # NumPyro's AutoNormal


def test_a_misspelt_default_guide_name_is_refused_with_the_closest_name() -> None:
    with pytest.raises(ConfigError, match="AutoStandardizedMultivariateNormal") as err:
        NumpyroTask(model=ridge, guide="AutoStandardisedMultivariateNormal")
    assert err.value.field == "task.guide"
