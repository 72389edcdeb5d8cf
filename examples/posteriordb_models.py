"""Twenty-four posteriordb posteriors written as NumPyro models ``model(x, y=None)``.

Each model follows the ``model.md`` of its folder: the first seven under ``posteriordb/`` (the
reference posteriors shipped next to this repository; see its README), the seventeen of
:data:`DEFAULTS` under ``examples/posteriordb/`` in this repository (same folder format, same
source commit; see its README). The data files are turned into the ``(x, y)`` convention of
pipekit-train; for the fourteen of :data:`MORE`, every covariate transform the posteriordb
model makes in its transformed data (logs, centring, standardisation with the sample sd,
dummies) is made by :func:`load_data`, so ``x`` holds the model's own covariates:

| posterior | x | y |
|---|---|---|
| eight_schools-eight_schools_noncentered | sigma (J,) | y (J,) |
| arK-arK | lag matrix (T-K, K): column k-1 holds y[t-k] | y[K:] |
| kidiq-kidscore_interaction | (mom_hs, mom_iq) (N, 2) | kid_score |
| sblrc-blr | X (N, D) | y |
| garch-garch11 | the previous observation, x[t] = y[t-1] (x[0] unused) | y |
| low_dim_gauss_mix-low_dim_gauss_mix | a column of ones (N, 1): no covariates | y |
| gp_pois_regr-gp_pois_regr | x (N,) | k (N,) counts |
| arma-arma11 | the previous observation, x[t] = y[t-1] (x[0] unused) | y |
| hmm_example-hmm_example | a column of ones (N, 1): no covariates | y |
| kilpisjarvi_mod-kilpisjarvi | year (N,) | summer temperature (N,) |
| earnings-earn_height | height in inches (N, 1) | earn (dollars) |
| earnings-logearn_interaction | (height, male) (N, 2) | log(earn) |
| earnings-logearn_interaction_z | (z_height, male) (N, 2), z = (height - mean) / sd | log(earn) |
| earnings-logearn_logheight_male | (log(height), male) (N, 2) | log(earn) |
| kidiq-kidscore_momhsiq | (mom_hs, mom_iq) (N, 2) | kid_score |
| kidiq-kidscore_momiq | mom_iq (N, 1) | kid_score |
| kidiq_with_mom_work-kidscore_mom_work | (mom_work == 2, == 3, == 4) (N, 3) | kid_score |
| kidiq_with_mom_work-kidscore_interaction_z | (mom_hs, mom_iq) centred, / 2 sd (N, 2) | kid_score |
| mesquite-mesquite | (diam1, diam2, canopy_height, total_height, density, group) (N, 6) | weight |
| mesquite-logmesquite | log of mesquite's first five columns, then group (N, 6) | log(weight) |
| mesquite-logmesquite_logvash | log(vol, area, shape, total_height), group (N, 5) | log(weight) |
| nes1980-nes | (ideo, race, age 30-44 / 45-64 / 65+, educ, gender, income) (N, 8) | partyid7 |
| sblri-blr | X (N, D) | y |
| gp_pois_regr-gp_regr | x (N,) | y (N,): one joint Gaussian draw |

sd is the sample sd (ddof = 1), as Stan's ``sd``. logmesquite_logvash's canopy volume is
diam1 * diam2 * canopy_height, its area diam1 * diam2 and its shape diam1 / diam2; nes's age
columns are indicators of age_discrete = 2, 3, 4 (18-29 the baseline), the other columns the
data file's values.

The fourteen's regressions are four functions: :func:`regression` (flat priors, ``beta[0]``
the intercept and ``beta[1:]`` the coefficients of x's columns), :func:`regression_cauchy` (the
same with sigma ~ HalfCauchy(2.5)), :func:`interaction` (flat priors, two covariates and their
product), and sblri's is :func:`sblrc` (posteriordb's ``blr`` model, shared with sblrc-blr).

kilpisjarvi's prior means and sds are data in Stan; here they are the task's static
``model_kwargs`` (:data:`MODEL_KWARGS`). The ARMA and the HMM declare ``ordered=True``
(:data:`ORDERED`): their likelihood depends on the order of the rows.

The models that a minibatch SVI run may subsample (arK, sblrc, kidiq, the
mixture, the fourteen's regressions) take ``N=None`` and wrap their likelihood in
``numpyro.plate("data", N, subsample_size=x.shape[0])``; bind ``N`` with
``functools.partial`` for minibatches.

``SETTINGS`` holds the sampler settings that posteriordb/README.md measured to pass; the
posteriors of :data:`DEFAULTS` have none: validation runs them at every backend's default
options (issue 25).
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
#: The posteriordb copies kept in this repository (the posteriors of :data:`DEFAULTS`).
IN_REPO = Path(__file__).resolve().parent / "posteriordb"

__all__ = [
    "DEFAULTS",
    "IN_REPO",
    "MODELS",
    "MODEL_KWARGS",
    "ORDERED",
    "POSTERIORDB",
    "SETTINGS",
    "folder",
    "load_data",
    "load_reference",
]


def folder(name: str) -> Path:
    """The folder of posterior ``name``: this repository's copy if it has one, else the
    posteriordb copy beside the checkout (``POSTERIORDB``)."""
    here = IN_REPO / name
    return here if here.is_dir() else POSTERIORDB / name


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


def arma11(x: Any, y: Any = None) -> None:
    """ARMA(1,1): nu[t] = mu + phi y[t-1] + theta err[t-1], err = y - nu, err ~ N(0, sigma).

    The first prediction is mu + phi mu (err[0] taken as 0 before the series), so ``x[0]`` is
    unused. The recursion needs the observed series; with ``y=None`` (prediction) the past
    errors are taken as 0, the one-step-ahead mean of an AR(1) around mu.
    """
    mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
    phi = numpyro.sample("phi", dist.Normal(0.0, 2.0))
    theta = numpyro.sample("theta", dist.Normal(0.0, 2.0))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    prev = jnp.concatenate([mu[None], x[1:]])
    if y is None:
        nu = mu + phi * prev
    else:

        def step(err_prev: Any, row: tuple[Any, Any]) -> tuple[Any, Any]:
            y_prev, y_t = row
            nu_t = mu + phi * y_prev + theta * err_prev
            return y_t - nu_t, nu_t

        _, nu = jax.lax.scan(step, jnp.zeros_like(mu), (prev, y))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(nu, sigma), obs=y)


def hmm_example(x: Any, y: Any = None) -> None:
    """Two-state Gaussian HMM (unit emission sd), rows of the transition matrix on flat
    simplexes, positive ordered state means with Normal(3, 1) / Normal(10, 1) priors; the
    likelihood is the forward algorithm's log marginal, a ``numpyro.factor`` (there is no
    observed site to draw: the predictive op says so; with ``y=None`` the model is the prior)."""
    theta1 = numpyro.sample("theta1", dist.Dirichlet(jnp.ones(2)))
    theta2 = numpyro.sample("theta2", dist.Dirichlet(jnp.ones(2)))
    mu = numpyro.sample("mu", dist.ImproperUniform(constraints.positive_ordered_vector, (), (2,)))
    numpyro.factor("mu_prior", dist.Normal(jnp.array([3.0, 10.0]), 1.0).log_prob(mu).sum())
    if y is None:
        return
    log_trans = jnp.log(jnp.stack([theta1, theta2]))  # [from, to]
    emission = dist.Normal(mu, 1.0).log_prob(y[:, None])  # (N, K)

    def forward(gamma: Any, emit: Any) -> tuple[Any, None]:
        return jax.nn.logsumexp(gamma[:, None] + log_trans, axis=0) + emit, None

    gamma, _ = jax.lax.scan(forward, emission[0], emission[1:])
    numpyro.factor("lik", jax.nn.logsumexp(gamma))


def kilpisjarvi(
    x: Any,
    y: Any = None,
    pmualpha: float = 0.0,
    psalpha: float = 1.0,
    pmubeta: float = 0.0,
    psbeta: float = 1.0,
) -> None:
    """Linear trend of summer temperature on the year, Normal priors whose means and sds are
    keywords (``MODEL_KWARGS``), a flat prior on sigma > 0. x is the raw year (1952-2013), so
    alpha and beta are correlated at about -1: a diagonal mass matrix saturates the tree."""
    alpha = numpyro.sample("alpha", dist.Normal(pmualpha, psalpha))
    beta = numpyro.sample("beta", dist.Normal(pmubeta, psbeta))
    sigma = numpyro.sample("sigma", dist.ImproperUniform(constraints.positive, (), ()))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(alpha + beta * x, sigma), obs=y)


def regression(x: Any, y: Any = None, N: int | None = None) -> None:
    """y ~ Normal(beta[0] + x @ beta[1:], sigma), flat priors on beta and on sigma > 0 (the
    posteriordb models without a prior statement)."""
    beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (x.shape[1] + 1,)))
    sigma = numpyro.sample("sigma", dist.ImproperUniform(constraints.positive, (), ()))
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(beta[0] + x @ beta[1:], sigma), obs=y)


def regression_cauchy(x: Any, y: Any = None, N: int | None = None) -> None:
    """y ~ Normal(beta[0] + x @ beta[1:], sigma), flat prior on beta, sigma ~ HalfCauchy(2.5)."""
    beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (x.shape[1] + 1,)))
    sigma = numpyro.sample("sigma", dist.HalfCauchy(2.5))
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(beta[0] + x @ beta[1:], sigma), obs=y)


def interaction(x: Any, y: Any = None, N: int | None = None) -> None:
    """y ~ Normal(b1 + b2 u + b3 v + b4 u v, sigma) for x = (u, v), flat priors on beta and
    on sigma > 0."""
    beta = numpyro.sample("beta", dist.ImproperUniform(constraints.real, (), (4,)))
    sigma = numpyro.sample("sigma", dist.ImproperUniform(constraints.positive, (), ()))
    u, v = x[:, 0], x[:, 1]
    mean = beta[0] + beta[1] * u + beta[2] * v + beta[3] * u * v
    with _data_plate(N, x):
        numpyro.sample("obs", dist.Normal(mean, sigma), obs=y)


def gp_regr(x: Any, y: Any = None) -> None:
    """Gaussian-process regression marginalised over the latent function: y ~ MVN(0, K + sigma
    I), K the squared-exponential kernel (magnitude alpha, length-scale rho). sigma is added
    to the diagonal as it is (a variance in effect, not squared), as in posteriordb's model.
    rho ~ Gamma(25, 4), alpha ~ HalfNormal(2), sigma ~ HalfNormal(1). The N observations are
    one joint draw, so there is no data plate: ``y=None`` draws one vector."""
    rho = numpyro.sample("rho", dist.Gamma(25.0, 4.0))
    alpha = numpyro.sample("alpha", dist.HalfNormal(2.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    n = x.shape[0]
    d2 = (x[:, None] - x[None, :]) ** 2
    cov = alpha**2 * jnp.exp(-0.5 * d2 / rho**2) + sigma * jnp.eye(n)
    L = jnp.linalg.cholesky(cov)
    numpyro.sample("obs", dist.MultivariateNormal(jnp.zeros(n), scale_tril=L), obs=y)


MODELS: dict[str, Any] = {
    "eight_schools-eight_schools_noncentered": eight_schools,
    "arK-arK": arK,
    "kidiq-kidscore_interaction": kidiq,
    "sblrc-blr": sblrc,
    "garch-garch11": garch,
    "low_dim_gauss_mix-low_dim_gauss_mix": low_dim_gauss_mix,
    "gp_pois_regr-gp_pois_regr": gp_pois_regr,
    "arma-arma11": arma11,
    "hmm_example-hmm_example": hmm_example,
    "kilpisjarvi_mod-kilpisjarvi": kilpisjarvi,
    "earnings-earn_height": regression,
    "earnings-logearn_interaction": interaction,
    "earnings-logearn_interaction_z": interaction,
    "earnings-logearn_logheight_male": regression,
    "kidiq-kidscore_momhsiq": regression_cauchy,
    "kidiq-kidscore_momiq": regression_cauchy,
    "kidiq_with_mom_work-kidscore_mom_work": regression,
    "kidiq_with_mom_work-kidscore_interaction_z": interaction,
    "mesquite-mesquite": regression,
    "mesquite-logmesquite": regression,
    "mesquite-logmesquite_logvash": regression,
    "nes1980-nes": regression,
    "sblri-blr": sblrc,
    "gp_pois_regr-gp_regr": gp_regr,
}

#: The fourteen posteriors added for issue 33 (``examples/posteriordb/``, the second table
#: above): regressions on raw and transformed scales, a one-way ANOVA and a marginal GP.
MORE = (
    "earnings-earn_height",
    "earnings-logearn_interaction",
    "earnings-logearn_interaction_z",
    "earnings-logearn_logheight_male",
    "kidiq-kidscore_momhsiq",
    "kidiq-kidscore_momiq",
    "kidiq_with_mom_work-kidscore_mom_work",
    "kidiq_with_mom_work-kidscore_interaction_z",
    "mesquite-mesquite",
    "mesquite-logmesquite",
    "mesquite-logmesquite_logvash",
    "nes1980-nes",
    "sblri-blr",
    "gp_pois_regr-gp_regr",
)
#: Posteriors validated at every backend's default options (no entry in :data:`SETTINGS`):
#: an ARMA and an HMM (order-dependent likelihoods), a regression whose raw-year covariate
#: saturates NUTS's tree depth under a diagonal mass matrix (issue 25), and :data:`MORE`.
DEFAULTS = ("arma-arma11", "hmm_example-hmm_example", "kilpisjarvi_mod-kilpisjarvi", *MORE)
#: Posteriors whose likelihood depends on the order of the rows (``NumpyroTask.ordered``).
ORDERED = frozenset({"arK-arK", "garch-garch11", "arma-arma11", "hmm_example-hmm_example"})
#: Static hyper-parameters from the data file (``NumpyroTask.model_kwargs``).
MODEL_KWARGS: dict[str, tuple[str, ...]] = {
    "kilpisjarvi_mod-kilpisjarvi": ("pmualpha", "psalpha", "pmubeta", "psbeta"),
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
    path = folder(name) / "data.json"
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
    if name in MORE:
        return _load_more(name, d)
    if name == "kidiq-kidscore_interaction":
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
    if name == "arma-arma11":
        y = np.asarray(d["y"], f)
        return np.concatenate([[0.0], y[:-1]]), y
    if name == "hmm_example-hmm_example":
        y = np.asarray(d["y"], f)
        return np.ones((len(y), 1), f), y
    if name == "kilpisjarvi_mod-kilpisjarvi":
        return np.asarray(d["x"], f), np.asarray(d["y"], f)
    raise KeyError(name)


def _z(v: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """(v - mean) / (scale * sd), sd the sample sd (ddof = 1) as Stan's ``sd``."""
    return (v - v.mean()) / (scale * v.std(ddof=1))


def _load_more(name: str, d: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of one of :data:`MORE` from its data file ``d``: every covariate transform
    of the posteriordb model's transformed data (logs, standardisation, dummies) is made here,
    so the models hold none."""
    f = np.float64

    def col(key: str) -> np.ndarray:
        return np.asarray(d[key], f)

    if name.startswith("earnings-"):
        height, male, earn = col("height"), col("male"), col("earn")
        if name == "earnings-earn_height":
            return height[:, None], earn
        first = {
            "earnings-logearn_interaction": height,
            "earnings-logearn_interaction_z": _z(height),
            "earnings-logearn_logheight_male": np.log(height),
        }[name]
        return np.stack([first, male], axis=1), np.log(earn)
    if name.startswith("kidiq-"):
        hs, iq = col("mom_hs"), col("mom_iq")
        x = np.stack([hs, iq], axis=1) if name == "kidiq-kidscore_momhsiq" else iq[:, None]
        return x, col("kid_score")
    if name == "kidiq_with_mom_work-kidscore_mom_work":
        work = np.asarray(d["mom_work"])
        return np.stack([(work == k).astype(f) for k in (2, 3, 4)], axis=1), col("kid_score")
    if name == "kidiq_with_mom_work-kidscore_interaction_z":
        x = np.stack([_z(col("mom_hs"), 2.0), _z(col("mom_iq"), 2.0)], axis=1)
        return x, col("kid_score")
    if name.startswith("mesquite-"):
        d1, d2, ch = col("diam1"), col("diam2"), col("canopy_height")
        th, dens, group, weight = col("total_height"), col("density"), col("group"), col("weight")
        if name == "mesquite-mesquite":
            return np.stack([d1, d2, ch, th, dens, group], axis=1), weight
        if name == "mesquite-logmesquite":
            logs = [np.log(v) for v in (d1, d2, ch, th, dens)]
            return np.stack([*logs, group], axis=1), np.log(weight)
        cols = [np.log(d1 * d2 * ch), np.log(d1 * d2), np.log(d1 / d2), np.log(th), group]
        return np.stack(cols, axis=1), np.log(weight)
    if name == "nes1980-nes":
        age = np.asarray(d["age_discrete"])
        cols = [col("real_ideo"), col("race_adj")]
        cols += [(age == k).astype(f) for k in (2, 3, 4)]
        cols += [col("educ1"), col("gender"), col("income")]
        return np.stack(cols, axis=1), col("partyid7")
    if name == "sblri-blr":
        return np.asarray(d["X"], f), col("y")
    if name == "gp_pois_regr-gp_regr":
        return col("x"), col("y")
    raise KeyError(name)


def load_reference(name: str) -> dict[str, Any]:
    """The folder's ``reference_summary.json``."""
    return json.loads((folder(name) / "reference_summary.json").read_text())


def task_fields(name: str) -> dict[str, Any]:
    """``NumpyroTask`` fields beyond the model: ``ordered`` and the data file's static
    ``model_kwargs``."""
    fields: dict[str, Any] = {"ordered": name in ORDERED}
    keys = MODEL_KWARGS.get(name)
    if keys:
        d = json.loads((folder(name) / "data.json").read_text())
        fields["model_kwargs"] = {k: float(d[k]) for k in keys}
    return fields


def default_loop(name: str, backend: str, *, seed: int = 0, sampler: str | None = None) -> Any:
    """``backend`` (numpyro-mcmc or blackjax) on posterior ``name`` at its default options:
    4 chains × (1000 warmup + 1000 draws), no ``backend_options`` but blackjax's ``sampler``
    where one is named."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    x, y = load_data(name)
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name], num_warmup=1000, num_samples=1000, num_chains=4, **task_fields(name)
        ),
        dataset=(x, y),
        backend=backend,
        seed=seed,
        backend_options={"sampler": sampler} if sampler else {},
        log_every_n_steps=500,
    )


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


#: The ``blackjax`` recipes beyond :data:`SETTINGS`, sampler → posterior → overrides, measured
#: (4 chains, float64, seed 0; docs/validation.md states the results). ``"*"`` applies to every
#: posterior; ``num_warmup`` / ``num_samples`` go to the task, the rest to ``backend_options``.
BLACKJAX_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "nuts": {},
    "hmc": {
        # A fixed trajectory: 10 steps of the adapted ~0.67 step with a dense mass matrix is ~2π
        # on this near-Gaussian posterior, so each transition comes back almost to where it
        # started (R-hat 1.32); 4 steps (~π) mix.
        "kidiq-kidscore_interaction": {"num_integration_steps": 4, "num_samples": 2000},
        # target_accept 0.99 adapts a step of ~0.012: 10 steps are a random walk (R-hat 2.1).
        "gp_pois_regr-gp_pois_regr": {"num_integration_steps": 128, "num_samples": 2000},
        # 10 steps mix slowly here: R-hat 1.013 at 1,000 draws, 1.009 at 2,000.
        "low_dim_gauss_mix-low_dim_gauss_mix": {"num_samples": 2000},
    },
    # mclmc has no recipe: it runs at its defaults on every posterior (default_loop; its
    # Pathfinder start and tuning, decision 0214).
    # Tempered SMC from N(start, 1); the inner HMC's mass is the particles' variance at each
    # tempering step (the backend's default), so step sizes are in units of their spread.
    # Under vmap every chain pays every step of the max_tempering_steps budget, so the budget
    # is kept near what the chains use.
    "smc": {
        # A unit mass and a fixed step (sds 0.012-0.066 unconstrained): preconditioned by the
        # particles (step 0.5 x 5, 5 moves) one chain of four ended in another mode (R-hat
        # 1.52); the small identity-mass step keeps every chain in the ordered mode.
        "low_dim_gauss_mix-low_dim_gauss_mix": {
            "num_particles": 500,
            "mass_matrix": "identity",
            "step_size": 0.02,
            "num_integration_steps": 5,
            "num_mcmc_steps": 5,
            "max_tempering_steps": 30,
        },
        # The tempered targets shrink from sd 1 to the betas' 0.001: with a unit mass no fixed
        # step served the whole path (sd ratios 45-160); preconditioned, λ = 1 in 26-38 steps.
        "sblrc-blr": {
            "step_size": 0.3,
            "num_integration_steps": 10,
            "num_mcmc_steps": 20,
            "max_tempering_steps": 45,
        },
    },
}


def blackjax_settings(name: str, sampler: str = "nuts") -> tuple[int, int, dict[str, Any]]:
    """``(num_warmup, num_samples, backend_options)`` of ``sampler`` on posterior ``name``:
    :data:`SETTINGS` (``target_accept`` / ``dense_mass`` only for nuts / hmc; ``init_values``
    for every sampler), then :data:`BLACKJAX_SETTINGS`."""
    settings = dict(SETTINGS[name])
    num_warmup = settings.pop("num_warmup", 1000)
    init_values = settings.pop("init_values", None)
    if sampler not in ("nuts", "hmc"):
        settings = {}
    if init_values:
        settings["init_values"] = init_values
    recipe = BLACKJAX_SETTINGS.get(sampler, {})
    settings.update(recipe.get("*", {}))
    settings.update(recipe.get(name, {}))
    num_warmup = settings.pop("num_warmup", num_warmup)
    num_samples = settings.pop("num_samples", 1000)
    return num_warmup, num_samples, settings


def blackjax_loop(
    name: str, sampler: str = "nuts", *, seed: int = 0, num_samples: int | None = None
) -> Any:
    """The ``blackjax`` backend on posterior ``name``: the same NumPyro model, data, chains and
    float64 as :func:`mcmc_loop`, with :func:`blackjax_settings` (``num_samples`` overrides
    the recipe's draws)."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    num_warmup, draws, settings = blackjax_settings(name, sampler)
    x, y = load_data(name)
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name],
            num_warmup=num_warmup,
            num_samples=num_samples or draws,
            num_chains=4,
        ),
        dataset=(x, y),
        backend="blackjax",
        seed=seed,
        backend_options={"sampler": sampler, "x64": True, "steps_per_call": 500, **settings},
        log_every_n_steps=500,
    )


#: sgld / sghmc recipes, posterior → sampler → settings (measured, seed 0; the bias they leave
#: is in docs/validation.md). ``batch_size`` is the minibatch, ``num_warmup`` the burn-in, the
#: rest ``backend_options``. Step sizes are bounded by the stiffest direction (sblrc's betas:
#: posterior sd 0.001 at correlation 0.8) and there is no preconditioning, so the slowest one
#: (sblrc's sigma, 75 times wider) needs ~1e5 steps per independent draw: hence the counts.
SG_SETTINGS: dict[str, dict[str, dict[str, Any]]] = {
    "sblrc-blr": {
        "sgld": {"batch_size": 50, "num_warmup": 10000, "num_samples": 1000000, "step_size": 1e-7},
        # SGHMC keeps one minibatch for a whole trajectory, so a trajectory longer than the
        # stiff directions allow follows that batch's posterior (measured: 50 steps of 2e-5
        # put the betas' sd at 1.29-1.48 of the reference's, sigma's mean 1.45 sd_ref high).
        "sghmc": {
            "batch_size": 50,
            "num_warmup": 5000,
            "num_samples": 100000,
            "step_size": 2e-5,
            "num_integration_steps": 20,
        },
    },
    "low_dim_gauss_mix-low_dim_gauss_mix": {
        "sgld": {
            "batch_size": 100,
            "num_warmup": 20000,
            "num_samples": 40000,
            "step_size": 3e-5,
            "step_size_power": 0.1,
        },
        # Batch 250: at batch 100 the same run put mu[2]'s sd at 1.84 of the reference's.
        "sghmc": {
            "batch_size": 250,
            "num_warmup": 2000,
            "num_samples": 10000,
            "step_size": 2e-4,
            "num_integration_steps": 50,
        },
    },
}


def sg_init_values(name: str) -> dict[str, Any]:
    """Where the SG chains start (every chain the same point): SG-MCMC is usually started at an
    optimum, and from ``init_to_uniform`` it does not get there (sblrc: three of four chains
    diverged or drifted to sigma > 100 at any step that moves sigma; the mixture: chains
    settle in the mode that merges both components). sblrc: the least-squares fit and its
    residual sd; the mixture: ``SETTINGS``' mu = (-1, 1), the rest uniform."""
    if name == "sblrc-blr":
        x, y = load_data(name)
        beta, *_ = np.linalg.lstsq(x, y, rcond=None)
        resid = y - x @ beta
        sigma = float(np.sqrt(resid @ resid / (len(y) - x.shape[1])))
        return {"beta": beta.tolist(), "sigma": sigma}
    return dict(SETTINGS[name].get("init_values", {}))


def sg_loop(name: str, sampler: str, *, seed: int = 0) -> Any:
    """``sgld`` / ``sghmc`` of the ``blackjax`` backend on posterior ``name``'s NumPyro model,
    on minibatches (the model's ``N`` bound to the dataset size by the backend), 4 chains,
    float64, :data:`SG_SETTINGS`, started at :func:`sg_init_values`."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    settings = dict(SG_SETTINGS[name][sampler])
    settings["init_values"] = sg_init_values(name)
    batch_size = settings.pop("batch_size")
    num_warmup = settings.pop("num_warmup")
    num_samples = settings.pop("num_samples")
    x, y = load_data(name)
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name], num_warmup=num_warmup, num_samples=num_samples, num_chains=4
        ),
        dataset=(x, y),
        backend="blackjax",
        batch_size=batch_size,
        seed=seed,
        backend_options={"sampler": sampler, "x64": True, "steps_per_call": 1000, **settings},
        log_every_n_steps=1000,
    )


def svi_loop(
    name: str,
    *,
    steps: int,
    lr: float,
    batch_size: int | None = None,
    seed: int = 0,
    shuffle: bool = True,
    defaults: bool = False,
) -> Any:
    """numpyro-svi with a full-rank guide on posterior ``name``: Adam at ``lr`` held for the
    first half, then cosine-decayed to 1e-4 (posteriordb/README); full batch by default.
    ``defaults``: the backend's defaults and the task's :func:`task_fields` only — the default
    guide (``guide=None``), no ``backend_options`` (float32), and the loop's ``max_steps`` and
    ``optimizer_config`` (SVI's default schedule); ``steps`` and ``lr`` are then unused."""
    from pipekit_train import TrainingLoop
    from pipekit_train.adapters.bayes import NumpyroTask

    x, y = load_data(name)
    options: dict[str, Any] = {} if defaults else {"steps_per_call": 500, "x64": True}
    if not shuffle:
        options["shuffle"] = False
    schedule: dict[str, Any] = {
        "max_steps": steps,
        "optimizer_config": {
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
        "log_every_n_steps": 1000,
    }
    return TrainingLoop(
        task=NumpyroTask(
            model=MODELS[name],
            # At defaults, the backend's own guide (the standardised full-rank one).
            guide=None if defaults else "AutoMultivariateNormal",
            predictive_samples=4000,
            **(task_fields(name) if defaults else {}),
        ),
        dataset=(x, y),
        backend="numpyro-svi",
        batch_size=batch_size or len(x),
        seed=seed,
        # At defaults nothing else: the loop's max_steps (1,000) and SVI's default schedule.
        **({} if defaults else schedule),
        backend_options=options,
    )
