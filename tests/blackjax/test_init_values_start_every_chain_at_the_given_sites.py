"""``backend_options.init_values`` starts every chain of a NumPyro task at the given sites (the
rest ``init_to_uniform``), on the full-data and the minibatch (sgld / sghmc) bridge alike, and
a bad value is a ``ConfigError`` naming the field before anything runs."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
from _bjx_helpers import gauss_task, loop_for, regression_data
from _bjx_helpers import numpyro_regression as regression

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.blackjax import BlackjaxTask, parse_options
from pipekit_train.adapters.blackjax._target import build_target, check_target
from pipekit_train.errors import ConfigError

X, Y = regression_data()


def _starts(sampler: str, init_values: dict | None) -> dict[str, np.ndarray]:
    task = BlackjaxTask(numpyro_task=NumpyroTask(model=regression, num_chains=3))
    values = parse_options({"init_values": init_values}).init_values if init_values else None
    check_target(task, sampler, X, Y, 16, values)
    target = build_target(task, sampler, X, Y, 3, jax.random.PRNGKey(0), 16, values)
    return {k: np.asarray(v) for k, v in target.positions.items()}


@pytest.mark.parametrize("sampler", ["nuts", "sgld"])
def test_named_sites_start_at_the_value_and_the_rest_stay_uniform(sampler: str) -> None:
    free = _starts(sampler, None)
    given = _starts(sampler, {"beta": [0.5, -0.5]})
    # Unconstrained starts, one row per chain: beta is real, so its start is the value itself.
    np.testing.assert_allclose(given["beta"], np.tile([0.5, -0.5], (3, 1)))
    assert not np.allclose(free["beta"][0], free["beta"][1])
    # sigma was not named: each chain still draws its own uniform start in (-2, 2).
    assert len(set(np.round(given["sigma"], 8))) == 3 and np.all(np.abs(given["sigma"]) < 2)


def test_a_run_with_init_values_samples_and_reports_them() -> None:
    """A whole run with init_values (a constrained sigma among them) samples and reports
    the values it started from in ``backend_info``."""
    task = NumpyroTask(model=regression, num_warmup=0, num_samples=2, num_chains=2)
    loop = loop_for(
        task,
        "nuts",
        options={"init_values": {"beta": [2.0, -1.0], "sigma": 0.5}, "steps_per_call": 2},
        dataset=(X, Y),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    assert info["init_values"] == {"beta": [2.0, -1.0], "sigma": 0.5}
    assert np.all(np.isfinite(op.samples["beta"])) and np.all(op.samples["sigma"] > 0)


@pytest.mark.parametrize(
    ("init_values", "field"),
    [
        ([0.5, -0.5], "backend_options.init_values"),
        ({}, "backend_options.init_values"),
        ({"beta": "a"}, "backend_options.init_values.beta"),
        ({"beta": [np.nan, 0.0]}, "backend_options.init_values.beta"),
    ],
)
def test_a_malformed_value_is_a_config_error(init_values, field: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_options({"init_values": init_values})
    assert err.value.field == field


@pytest.mark.parametrize(
    ("sampler", "init_values", "field", "says"),
    [
        ("nuts", {"alpha": 1.0}, "backend_options.init_values.alpha", "beta, sigma"),
        ("sgld", {"beta": [1.0, 2.0, 3.0]}, "backend_options.init_values.beta", "shape (2,)"),
        ("nuts", {"obs": 1.0}, "backend_options.init_values.obs", "not a latent"),
    ],
)
def test_a_site_the_model_lacks_or_a_wrong_shape_is_refused_before_running(
    sampler: str, init_values: dict, field: str, says: str
) -> None:
    task = NumpyroTask(model=regression, num_warmup=5, num_samples=5)
    extra = {"batch_size": 16} if sampler == "sgld" else {}
    loop = loop_for(task, sampler, options={"init_values": init_values}, dataset=(X, Y), **extra)
    with pytest.raises(ConfigError) as err:
        loop.run()
    assert err.value.field == field and says in str(err.value)


def test_a_raw_target_refuses_init_values() -> None:
    loop = loop_for(gauss_task(), "nuts", options={"init_values": {"position": [0.0, 0, 0]}})
    with pytest.raises(ConfigError) as err:
        loop.run()
    assert err.value.field == "backend_options.init_values"
    assert "init_position" in str(err.value)


@pytest.mark.parametrize("sampler", ["nuts", "sgld"])
def test_a_value_outside_its_sites_support_is_a_config_error(sampler: str) -> None:
    # sigma ~ HalfNormal: -1 has the right name and shape but no density; NumPyro's own
    # "Cannot find valid initial parameters" would name neither the option nor the fix.
    task = NumpyroTask(model=regression, num_warmup=5, num_samples=5)
    extra = {"batch_size": 16} if sampler == "sgld" else {}
    loop = loop_for(
        task, sampler, options={"init_values": {"sigma": -1.0}}, dataset=(X, Y), **extra
    )
    with pytest.raises(ConfigError) as err:
        loop.run()
    # Judged on the traced site's support before compiling, so the site itself is named.
    assert err.value.field == "backend_options.init_values.sigma"
    assert "support" in str(err.value) and "sigma" in str(err.value)
