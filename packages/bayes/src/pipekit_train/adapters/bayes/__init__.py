"""The shared layer of the Bayesian backends (``numpyro-svi``, ``numpyro-mcmc``, ``blackjax``).

- ``NumpyroTask`` — the model plus the settings each backend reads (no ``method`` field).
- ``log_density_from_model`` / ``LogDensity`` — the model → log-density bridge
  (``initialize_model``: potential, postprocess, a valid start) BlackJAX reuses;
  ``minibatch_log_density_from_model`` the same on minibatches (BlackJAX's SG-MCMC),
  with ``bind_data_size`` binding the full data size ``N`` (shared with minibatch SVI) and
  ``refuse_local_latents`` refusing a latent in the plate the minibatches subsample.
- ``NumpyroPredictiveOp`` — the posterior-predictive Operator the backends return.
- ``diagnostics`` / ``diagnostic_warnings`` / ``to_inference_data`` — ArviZ's
  rank-normalised R-hat, bulk/tail ESS, MCSE, and the divergence count.
- ``elbo_convergence`` / ``importance_check`` / ``variational_warnings`` — whether a fitted
  guide can be trusted: the ELBO stopped moving, PSIS k-hat, the guide's spread.
- ``ConvergenceStop`` — a callback ending an MCMC run once R-hat and bulk ESS reach a target.
- ``WarmupCheck`` — the MCMC backends' hook naming a chain that warmup left stuck, at the
  end of warmup, before its draws are taken.
- ``parse_init_values`` / ``check_init_values`` / ``starts_from`` — both MCMC backends'
  ``init_values``: numbers, latent sites, their shapes and supports, before compiling.
- ``draws_by_chain`` / ``SAMPLE_PREFIX`` — the MCMC backends' draws in the driver trace.

Model convention: the dataset reaches the model by the model's own argument names
(``dataset={"at_bats": a, "hits": h}`` → ``model(at_bats=a, hits=h)``; no dataset for a
model without data), or as ``model(x, y=None)`` from ``(X, Y)`` / ``{"x": X, "y": Y}``,
every other named array as a keyword. The observed site is the model's own (its
``numpyro.sample(..., obs=...)``); ``NumpyroTask.model_kwargs`` adds static keywords.
For minibatch SVI, add ``N=None``
and wrap the likelihood in ``numpyro.plate("data", N, subsample_size=x.shape[0])``
(``N or x.shape[0]`` when ``N`` is None); bind the full size statically,
``functools.partial(model, N=len(x_train))``, so every batch is scaled by N/B.
"""

from ._bridge import (
    LogDensity,
    MinibatchLogDensity,
    log_density_from_model,
    minibatch_log_density_from_model,
)
from ._checks import check_task_on_args, check_task_on_data, likelihood_sites, predictive_site_of
from ._convergence import ConvergenceStop
from ._data import (
    check_binds,
    check_finite,
    full_data,
    is_named_form,
    model_data,
    named_data,
)
from ._diagnostics import (
    diagnostic_warnings,
    diagnostics,
    to_inference_data,
    variational_summary,
    warn_diagnostics,
)
from ._guides import BACKEND_GUIDE_NAMES, GUIDE_NAMES, STANDARDIZED_GUIDE, make_guide
from ._init_values import (
    INIT_JITTER_OPTION,
    check_init_values,
    outside_support,
    parse_init_values,
    starts_from,
)
from ._model import (
    bind_data_size,
    is_factor_site,
    model_import_string,
    model_sites,
    model_subsamples,
    refuse_local_latents,
    resolve_callable,
    resolve_model,
)
from ._option_names import SAMPLER_ALIASES, resolve_aliases
from ._plots import PosteriorPlots, plot_posterior_predictive
from ._predictive import NumpyroPredictiveOp
from ._runtime import precision, warn_unused_fields
from ._starts import (
    SCREEN_CANDIDATES,
    SCREEN_COMPILER_OPTIONS,
    SCREEN_SALT,
    init_to_value_jittered,
    screened_positions,
)
from ._task import NumpyroTask, check_model_keywords, require_task
from ._trace import SAMPLE_PREFIX, STAT_KEYS, draws_by_chain
from ._variational_health import (
    elbo_convergence,
    importance_check,
    variational_warnings,
)
from ._warmup_check import WarmupCheck

__all__ = [
    "PosteriorPlots",
    "plot_posterior_predictive",
    "NumpyroTask",
    "require_task",
    "BACKEND_GUIDE_NAMES",
    "GUIDE_NAMES",
    "STANDARDIZED_GUIDE",
    "make_guide",
    "LogDensity",
    "log_density_from_model",
    "MinibatchLogDensity",
    "minibatch_log_density_from_model",
    "bind_data_size",
    "refuse_local_latents",
    "model_subsamples",
    "NumpyroPredictiveOp",
    "diagnostics",
    "variational_summary",
    "diagnostic_warnings",
    "warn_diagnostics",
    "to_inference_data",
    "check_task_on_args",
    "predictive_site_of",
    "likelihood_sites",
    "named_data",
    "is_named_form",
    "check_binds",
    "resolve_model",
    "resolve_callable",
    "model_sites",
    "is_factor_site",
    "model_import_string",
    "check_task_on_data",
    "full_data",
    "model_data",
    "check_model_keywords",
    "precision",
    "warn_unused_fields",
    "check_finite",
    "ConvergenceStop",
    "WarmupCheck",
    "SAMPLE_PREFIX",
    "STAT_KEYS",
    "SAMPLER_ALIASES",
    "resolve_aliases",
    "init_to_value_jittered",
    "screened_positions",
    "SCREEN_CANDIDATES",
    "SCREEN_COMPILER_OPTIONS",
    "SCREEN_SALT",
    "parse_init_values",
    "INIT_JITTER_OPTION",
    "check_init_values",
    "outside_support",
    "starts_from",
    "draws_by_chain",
    "elbo_convergence",
    "importance_check",
    "variational_warnings",
]
