"""Fourteen more posteriordb posteriors written as NumPyro models ``model(x, y=None)``.

Each model follows the ``model.md`` of its folder under ``examples/posteriordb/`` (same folder
format as the posteriors of :mod:`posteriordb_models`; source commit and the checks are in that
folder's README). They are meant to be merged into :mod:`posteriordb_models`: ``MODELS_MORE``
into ``MODELS``, ``ORDERED_MORE`` into ``ORDERED``, ``MODEL_KWARGS_MORE`` into
``MODEL_KWARGS``, and the branches of :func:`load_data_more` into ``load_data`` (the folders
resolve through ``posteriordb_models.folder``, which finds them in ``examples/posteriordb/``).
The data files are turned into the ``(x, y)`` convention of pipekit-train; every covariate
transform that the posteriordb model makes in its transformed data (logs, centring,
standardisation with the sample sd, dummies) is made here, so ``x`` holds the model's own
covariates and the models hold no data transforms but the products of an interaction:

| posterior | x | y |
|---|---|---|
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

The regressions are four functions: :func:`regression` (flat priors, ``beta[0]`` the intercept
and ``beta[1:]`` the coefficients of x's columns), :func:`regression_cauchy` (the same with
sigma ~ HalfCauchy(2.5)), :func:`interaction` (flat priors, two covariates and their product),
and sblri's is :func:`posteriordb_models.sblrc` (posteriordb's ``blr`` model, shared with
sblrc-blr). They take ``N=None`` and wrap their
likelihood in ``numpyro.plate("data", N, subsample_size=x.shape[0])``, as the regressions of
:mod:`posteriordb_models` do, so a minibatch SVI run may subsample them.

None of them depends on the order of the rows (``ORDERED_MORE`` is empty) and none has a
hyper-parameter in its data file (``MODEL_KWARGS_MORE`` is empty). None has a sampler setting:
they were checked at numpyro-mcmc's default options (``examples/posteriordb/README.md``).
"""

from __future__ import annotations

import json
from typing import Any

import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.distributions import constraints
from posteriordb_models import folder, sblrc

__all__ = ["MODELS_MORE", "MODEL_KWARGS_MORE", "ORDERED_MORE", "load_data_more"]


def _data_plate(N: int | None, x: Any) -> Any:
    n = x.shape[0]
    return numpyro.plate("data", n if N is None else N, subsample_size=n)


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


MODELS_MORE: dict[str, Any] = {
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

#: Posteriors whose likelihood depends on the order of the rows: none of these.
ORDERED_MORE: frozenset[str] = frozenset()
#: Static hyper-parameters from the data file: none of these has one.
MODEL_KWARGS_MORE: dict[str, tuple[str, ...]] = {}


def _z(v: np.ndarray, scale: float = 1.0) -> np.ndarray:
    """(v - mean) / (scale * sd), sd the sample sd (ddof = 1) as Stan's ``sd``."""
    return (v - v.mean()) / (scale * v.std(ddof=1))


def load_data_more(name: str) -> tuple[np.ndarray, np.ndarray]:
    """``(x, y)`` of posterior ``name`` in the convention of the table above."""
    if name not in MODELS_MORE:
        raise KeyError(name)
    d = json.loads((folder(name) / "data.json").read_text())
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
