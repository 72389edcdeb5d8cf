"""Seven posteriordb posteriors written as NumPyro models ``model(x, y=None)``.

Each model follows the ``model.md`` of its folder under ``posteriordb/`` (the
reference posteriors shipped next to this repository; see its README). The
data files are turned into the ``(x, y)`` convention of pipekit-train:

| posterior | x | y |
|---|---|---|
| eight_schools-eight_schools_noncentered | sigma (J,) | y (J,) |
| arK-arK | lag matrix (T-K, K): column k-1 holds y[t-k] | y[K:] |
| kidiq-kidscore_interaction | (mom_hs, mom_iq) (N, 2) | kid_score |
| sblrc-blr | X (N, D) | y |
| garch-garch11 | the previous observation, x[t] = y[t-1] (x[0] unused) | y |
| low_dim_gauss_mix-low_dim_gauss_mix | a column of ones (N, 1): no covariates | y |
| gp_pois_regr-gp_pois_regr | x (N,) | k (N,) counts |

The models that a minibatch SVI run may subsample (arK, sblrc, kidiq, the
mixture) take ``N=None`` and wrap their likelihood in
``numpyro.plate("data", N, subsample_size=x.shape[0])``; bind ``N`` with
``functools.partial`` for minibatches.

``SETTINGS`` holds the sampler settings that posteriordb/README.md measured to pass.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints


def _default_posteriordb() -> Path:
    """``shared/posteriordb`` beside the repository checkout (how CI and developers lay it out)."""
    beside = Path(__file__).resolve().parents[2] / "shared" / "posteriordb"
    return beside if beside.is_dir() else Path("/work/shared/posteriordb")


POSTERIORDB = Path(os.environ.get("PIPEKIT_POSTERIORDB") or _default_posteriordb())

__all__ = ["MODELS", "SETTINGS", "load_data", "load_reference", "POSTERIORDB"]


def _data_plate(N: int | None, x: Any) -> Any:
    n = x.shape[0]
    return numpyro.plate("data", n if N is None else N, subsample_size=n)


def eight_schools(x: Any, y: Any = None) -> None:
    """Non-centred eight schools: theta = mu + tau * theta_trans (deterministic)."""
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("J", x.shape[0]):
        theta_trans = numpyro.sample("theta_trans", dist.Normal(0.0, 1.0))
        theta = numpyro.deterministic("theta", mu + tau * theta_trans)
        numpyro.sample("obs", dist.Normal(theta, x), obs=y)


def arK(x: Any, y: Any = None, N: int | None = None) -> None:
    """AR(K) with Normal(0, 10) coefficients and a HalfCauchy(2.5) innovation sd."""
    K = x.shape[1]
    alpha = numpyro.sample("alpha", dist.Normal(0.0, 10.0))
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([K]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(alpha + x @ beta, sigma), obs=y)


def kidiq(x: Any, y: Any = None, N: int | None = None) -> None:
    """kid_score ~ Normal(b1 + b2 hs + b3 iq + b4 hs iq, sigma), flat prior on beta."""
    beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (4,)))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    hs, iq = x[:, 0], x[:, 1]
    mean = beta[0] + beta[1] * hs + beta[2] * iq + beta[3] * hs * iq
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(mean, sigma), obs=y)


def sblrc(x: Any, y: Any = None, N: int | None = None) -> None:
    """Bayesian linear regression: beta ~ Normal(0, 10), sigma ~ HalfNormal(10)."""
    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([x.shape[1]]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(10.0))
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(x @ beta, sigma), obs=y)


GARCH_SIGMA1 = 0.5


def garch(x: Any, y: Any = None) -> None:
    """GARCH(1,1), flat prior on {alpha0 > 0, 0 < alpha1 < 1, 0 < beta1 < 1 - alpha1}.

    ``beta1 ~ Uniform(0, 1 - alpha1)`` plus ``factor(log(1 - alpha1))`` undoes the
    Uniform's normalisation (option 1 of model.md). ``x[t]`` is y[t-1].
    """
    mu = numpyro.sample("mu", dist.ImproperUniform(constraints.real, (), ()))
    alpha0 = numpyro.sample("alpha0", dist.ImproperUniform(constraints.positive, (), ()))
    alpha1 = numpyro.sample("alpha1", dist.Uniform(0.0, 1.0))
    beta1 = numpyro.sample("beta1", dist.Uniform(0.0, 1.0 - alpha1))
    numpyro.factor("undo_uniform", jnp.log1p(-alpha1))

    def step(s_prev: Any, y_prev: Any) -> tuple[Any, Any]:
        s = jnp.sqrt(alpha0 + alpha1 * (y_prev - mu) ** 2 + beta1 * s_prev**2)
        return s, s

    s1 = jnp.asarray(GARCH_SIGMA1, dtype=jnp.result_type(float))
    _, rest = jax.lax.scan(step, s1, x[1:])
    s = jnp.concatenate([s1[None], rest])
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(mu, s), obs=y)


def low_dim_gauss_mix(x: Any, y: Any = None, N: int | None = None) -> None:
    """Two-component normal mixture with ordered means and a Beta(5, 5) weight."""
    mu = numpyro.sample("mu", dist.ImproperUniform(constraints.ordered_vector, (), (2,)))
    numpyro.factor("mu_prior", dist.Normal(0.0, 2.0).log_prob(mu).sum())
    sigma = numpyro.sample("sigma", dist.HalfNormal(2.0).expand([2]).to_event(1))
    theta = numpyro.sample("theta", dist.Beta(5.0, 5.0))
    mix = dist.MixtureSameFamily(
        dist.Categorical(probs=jnp.stack([theta, 1.0 - theta])), dist.Normal(mu, sigma)
    )
    with _data_plate(N, x):
        numpyro.sample("obs", mix, obs=y)


def gp_pois_regr(x: Any, y: Any = None) -> None:
    """Poisson regression on a latent GP (whitened); needs float64 (see README)."""
    rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))
    alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))
    n = x.shape[0]
    d2 = (x[:, None] - x[None, :]) ** 2
    cov = alpha**2 * jnp.exp(-0.5 * d2 / rho**2) + 1e-10 * jnp.eye(n)
    L = jnp.linalg.cholesky(cov)
    f_tilde = numpyro.sample("f_tilde", dist.Normal(0.0, 1.0).expand([n]).to_event(1))
    f = numpyro.deterministic("f", L @ f_tilde)
    with numpyro.plate("data", n):
        numpyro.sample("obs", dist.Poisson(jnp.exp(f)), obs=y)


MODELS: dict[str, Any] = {
    "eight_schools-eight_schools_noncentered": eight_schools,
    "arK-arK": arK,
    "kidiq-kidscore_interaction": kidiq,
    "sblrc-blr": sblrc,
    "garch-garch11": garch,
    "low_dim_gauss_mix-low_dim_gauss_mix": low_dim_gauss_mix,
    "gp_pois_regr-gp_pois_regr": gp_pois_regr,
}

# Settings measured to pass (posteriordb/README.md, NumPyro 0.22 NUTS, float64, 4 chains).
SETTINGS: dict[str, dict[str, Any]] = {
    "eight_schools-eight_schools_noncentered": {"target_accept": 0.95},
    "arK-arK": {},
    "kidiq-kidscore_interaction": {"dense_mass": True},
    "sblrc-blr": {"num_warmup": 3000},
    "garch-garch11": {},
    "low_dim_gauss_mix-low_dim_gauss_mix": {"init_values": {"mu": [-1.0, 1.0]}},
    "gp_pois_regr-gp_pois_regr": {"target_accept": 0.99},
}


# Eight schools' data (Rubin 1981), the same values as its data.json, so the tests that only
# need this small data set run without a posteriordb copy.
EIGHT_SCHOOLS_DATA = {
    "J": 8,
    "y": [28, 8, -3, 7, -1, 1, 18, 12],
    "sigma": [15, 10, 16, 11, 9, 11, 10, 18],
}


def load_data(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of posterior ``name`` in the convention of the table above."""
    path = POSTERIORDB / name / "data.json"
    if name.startswith("eight_schools") and not path.exists():
        d: dict[str, Any] = EIGHT_SCHOOLS_DATA
    else:
        d = json.loads(path.read_text())
    f = np.float64
    if name.startswith("eight_schools"):
        return np.asarray(d["sigma"], f), np.asarray(d["y"], f)
    if name == "arK-arK":
        y, K = np.asarray(d["y"], f), int(d["K"])
        lags = np.stack([y[K - k : len(y) - k] for k in range(1, K + 1)], axis=1)
        return lags, y[K:]
    if name.startswith("kidiq"):
        x = np.stack([np.asarray(d["mom_hs"], f), np.asarray(d["mom_iq"], f)], axis=1)
        return x, np.asarray(d["kid_score"], f)
    if name == "sblrc-blr":
        return np.asarray(d["X"], f), np.asarray(d["y"], f)
    if name == "garch-garch11":
        y = np.asarray(d["y"], f)
        return np.concatenate([[0.0], y[:-1]]), y
    if name.startswith("low_dim_gauss_mix"):
        y = np.asarray(d["y"], f)
        return np.ones((len(y), 1), f), y
    if name.startswith("gp_pois_regr"):
        return np.asarray(d["x"], f), np.asarray(d["k"], np.int32)
    raise KeyError(name)


def load_reference(name: str) -> dict[str, Any]:
    """The folder's ``reference_summary.json``."""
    return json.loads((POSTERIORDB / name / "reference_summary.json").read_text())


# --------------------------------------------------------------------------- the loops
# The validation recipes, shared by the CI tests and `nox -s validate`
# (scripts/validate_posteriordb.py), so both check the very same runs.


def mcmc_loop(name: str, *, seed: int = 0) -> Any:
    """numpyro-mcmc on posterior ``name`` with the sampler settings posteriordb/README measured:
    4 chains × 1000 draws, float64, chunks of 500 steps."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    settings = dict(SETTINGS[name])
    num_warmup = settings.pop("num_warmup", 1000)
    x, y = load_data(name)
    return TrainingLoop(
        task=NumpyroTask(model=MODELS[name], num_warmup=num_warmup, num_samples=1000, num_chains=4),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=seed,
        backend_options={"x64": True, "steps_per_call": 500, **settings},
        log_every_n_steps=500,
    )


def blackjax_loop(
    name: str, sampler: str = "nuts", *, seed: int = 0, num_samples: int = 1000
) -> Any:
    """The ``blackjax`` backend on posterior ``name``: the same NumPyro model, data, chains,
    float64 and sampler settings as :func:`mcmc_loop` (``init_values`` has no BlackJAX
    counterpart and is dropped; ``nuts`` / ``hmc`` take ``target_accept`` and ``dense_mass``)."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    settings = dict(SETTINGS[name])
    num_warmup = settings.pop("num_warmup", 1000)
    settings.pop("init_values", None)
    if sampler not in ("nuts", "hmc"):
        settings = {}
    x, y = load_data(name)
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name], num_warmup=num_warmup, num_samples=num_samples, num_chains=4
        ),
        dataset=(x, y),
        backend="blackjax",
        seed=seed,
        backend_options={"sampler": sampler, "x64": True, "steps_per_call": 500, **settings},
        log_every_n_steps=500,
    )


def svi_loop(
    name: str,
    *,
    steps: int,
    lr: float,
    batch_size: int | None = None,
    seed: int = 0,
    shuffle: bool = True,
) -> Any:
    """numpyro-svi with a full-rank guide on posterior ``name``: Adam at ``lr`` held for the
    first half, then cosine-decayed to 1e-4 (posteriordb/README); full batch by default."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    x, y = load_data(name)
    options: dict[str, Any] = {"steps_per_call": 500, "x64": True}
    if not shuffle:
        options["shuffle"] = False
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name], guide="AutoMultivariateNormal", predictive_samples=4000
        ),
        dataset=(x, y),
        backend="numpyro-svi",
        batch_size=batch_size or len(x),
        max_steps=steps,
        seed=seed,
        optimizer_config={
            "name": "adam",
            "lr": {
                "schedule": "warmup_cosine_decay",
                "init_value": lr,
                "peak_value": lr,
                "warmup_steps": steps // 2,
                "decay_steps": steps,
                "end_value": 1e-4,
            },
        },
        log_every_n_steps=1000,
        backend_options=options,
    )
