"""The numpyro-mcmc backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.numpyro_mcmc`` (whose ``__init__`` imports NumPyro and
JAX) so that core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's
options before the backend is imported. The adapter's ``_options`` attaches the checks that
need more than the spec (a user's kernel object, site groups, arrays, ``init_values``).
"""

from __future__ import annotations

from pipekit_train.adapters._bayes_options import INIT_JITTER_OPTION, SAMPLER_ALIASES
from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    draws_per_call_option,
)

__all__ = ["OPTION_SPECS", "ALIASES", "INIT_STRATEGIES", "KERNELS", "CHAIN_METHODS"]

INIT_STRATEGIES = ("screened", "uniform", "median", "mean", "feasible", "sample")
KERNELS = ("nuts", "hmc")
CHAIN_METHODS = ("vectorized", "sequential")

#: The other libraries' spellings numpyro-mcmc accepts (``SAMPLER_ALIASES`` plus HMC's
#: BlackJAX name for the leapfrog steps).
ALIASES = {**SAMPLER_ALIASES, "num_integration_steps": "num_steps"}


def _aliases(name: str) -> tuple[str, ...]:
    return tuple(a for a, c in ALIASES.items() if c == name)


def _bool(name: str, default: bool, doc: str) -> OptionSpec:
    return OptionSpec(name, "bool", default, doc)


#: Every key numpyro-mcmc takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "kernel",
        "any",
        "nuts",
        "'nuts' or 'hmc', or your own numpyro.infer NUTS / HMC kernel (Python only)",
        what="'nuts', 'hmc' or a NumPyro NUTS / HMC kernel",
    ),
    OptionSpec("chain_method", "choice", "vectorized", "how chains run", choices=CHAIN_METHODS),
    OptionSpec(
        "dense_mass",
        "any",
        False,
        "dense mass matrix: true / false, or site groups [['a', 'b'], ['c']]",
        what="true, false or a list of site groups",
    ),
    OptionSpec(
        "target_accept",
        "float",
        0.8,
        "step-size adaptation's target acceptance probability",
        low=0,
        high=1,
        low_open=True,
        high_open=True,
        aliases=_aliases("target_accept"),
    ),
    OptionSpec(
        "max_tree_depth",
        "int",
        10,
        "NUTS's maximum tree depth",
        low=1,
        aliases=_aliases("max_tree_depth"),
    ),
    OptionSpec("step_size", "float", 1.0, "initial step size", low=0, low_open=True),
    _bool("adapt_step_size", True, "adapt the step size during warmup"),
    _bool("adapt_mass_matrix", True, "adapt the mass matrix during warmup"),
    OptionSpec(
        "inverse_mass_matrix",
        "any",
        None,
        "the initial inverse mass matrix: one array over all latent sites, or "
        "{'a': block, 'a,b': block} by site group",
        optional=True,
        what="an array, or a mapping from a site (group) to its block",
    ),
    _bool("forward_mode_differentiation", False, "forward-mode gradients (jax.jacfwd)"),
    INIT_JITTER_OPTION,
    OptionSpec(
        "num_steps",
        "int",
        None,
        "HMC's leapfrog steps (kernel 'hmc' only)",
        low=1,
        optional=True,
        aliases=_aliases("num_steps"),
    ),
    OptionSpec(
        "trajectory_length",
        "float",
        None,
        "HMC's path length (kernel 'hmc' only)",
        low=0,
        low_open=True,
        optional=True,
        what="a positive number",
    ),
    _bool("regularize_mass_matrix", True, "Stan's regularisation of the adapted mass matrix"),
    OptionSpec(
        "init_strategy",
        "choice",
        "screened",
        "each chain's start: 'screened' (the best of 16 of NumPyro's uniform starts by log "
        "density), or NumPyro's own strategy ('uniform': MCMC.run's default) for the sites "
        "init_values does not set",
        choices=INIT_STRATEGIES,
    ),
    OptionSpec(
        "init_values",
        "mapping",
        {},
        "site → starting value for every chain; each a latent site, in its shape, inside "
        "its support",
        what="a mapping of site names to starting values",
    ),
    _bool("x64", True, "sample in float64, as Stan and PyMC do (false: float32)"),
    RESUME_OPTION,
    draws_per_call_option(),
    compilation_cache_option(),
)
