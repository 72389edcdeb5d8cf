"""numpyro-svi's health line says OK only when the fitted guide can be trusted.

Three checks run at the end of every fit (``bayes._variational_health``): the ELBO stopped
moving over the run's logged windows, Pareto k-hat of the guide draws' importance weights
is at most 0.7 (PSIS), and no guide sd collapsed against its importance-weighted sd. A
conjugate model whose posterior the guide family holds passes all three; a centred eight
schools (a funnel a mean-field guide cannot hold) and a fit stopped while the ELBO still
falls are warned, each with its fix; a run logging too seldom to judge convergence says
what was not checked instead of OK.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpyro
import numpyro.distributions as dist

from pipekit_train import TrainingLoop
from pipekit_train._report import posterior_report
from pipekit_train.adapters.bayes import NumpyroTask


def normal_mean(x, y=None):
    """y ~ Normal(mu, 1), mu ~ Normal(0, 10): the posterior is normal, as AutoNormal's guide."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=y)


def centred_eight_schools(x, y=None):
    """The centred eight schools: theta ~ Normal(mu, tau), a funnel in (tau, theta)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("schools", 8):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, x[:, 0]), obs=y)


_DATA = {
    "normal": (
        np.ones((50, 1), np.float32),
        np.random.default_rng(0).normal(3.0, 1.0, 50).astype(np.float32),
    ),
    "schools": (
        np.array([[15.0], [10.0], [16.0], [11.0], [9.0], [11.0], [10.0], [18.0]], np.float32),
        np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0], np.float32),
    ),
}


def _fit(model, data, *, steps, lr, log_every=50):
    x, y = _DATA[data]
    loop = TrainingLoop(
        task=NumpyroTask(model=model, guide="AutoNormal", predictive_samples=200),
        dataset={"x": x, "y": y},
        backend="numpyro-svi",
        seed=0,
        batch_size=len(x),
        max_steps=steps,
        log_every_n_steps=log_every,
        optimizer_config={"name": "adam", "lr": lr},
        backend_options={"compilation_cache": "off"},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, info = loop.run()
    return info, [str(w.message) for w in caught], posterior_report(info)


def test_a_guide_that_holds_the_posterior_is_ok_with_its_figures():
    info, caught, report = _fit(normal_mean, "normal", steps=2000, lr=0.05)
    diag = info["diagnostics"]
    assert diag["elbo_convergence"]["checked"] and not diag["elbo_convergence"]["moving"]
    assert diag["importance"]["khat"] <= 0.7 and diag["importance"]["num_draws"] == 1000
    assert report[-1].startswith("health: OK — final ELBO "), report[-1]
    assert "Pareto k-hat" in report[-1] and "converged" in report[-1]
    assert not info["warnings"] and not any("k-hat" in c for c in caught)


def test_a_mean_field_guide_on_a_funnel_is_warned_by_psis_with_the_reparameterisation():
    info, caught, report = _fit(centred_eight_schools, "schools", steps=3000, lr=0.02)
    imp = info["diagnostics"]["importance"]
    assert imp.get("nonfinite") or imp["khat"] > 0.7, imp
    problems = "\n".join(report)
    assert "health: " in problems and "health: OK" not in problems
    assert "Pareto k-hat" in problems and "LocScaleReparam" in problems
    assert any("Pareto k-hat" in c for c in caught)  # also a UserWarning


def test_a_fit_stopped_while_the_elbo_still_falls_is_warned_to_train_longer():
    info, caught, report = _fit(normal_mean, "normal", steps=400, lr=0.002)
    conv = info["diagnostics"]["elbo_convergence"]
    assert conv["checked"] and conv["moving"] and conv["improvement"] > 0
    line = next(p for p in info["warnings"] if "ELBO is still moving" in p)
    assert "max_steps" in line and "optimizer_config.lr" in line
    assert "health: OK" not in "\n".join(report)


def test_too_few_logged_windows_says_what_was_not_checked_instead_of_ok():
    info, _, report = _fit(normal_mean, "normal", steps=200, lr=0.05, log_every=100)
    assert info["diagnostics"]["elbo_convergence"] == {"checked": False, "windows": 2}
    assert report[-1].startswith("health: no problems found, but not checked: ELBO convergence")
    assert "lower log_every" in report[-1]
