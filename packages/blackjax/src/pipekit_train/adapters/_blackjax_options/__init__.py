"""The blackjax backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.blackjax`` (whose ``__init__`` imports BlackJAX and
JAX) so that core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's
common options (``COMMON_SPECS``: the sampler's name, ``x64``, ``resume`` …) before the
backend is imported. A sampler's own parameters depend on the sampler, so the preflight
leaves them to the adapter (``KEEP_UNKNOWN``), which checks every key before compiling.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.adapters._bayes_options import INIT_JITTER_OPTION
from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    draws_per_call_option,
    num_data_option,
)
from pipekit_train.errors import ConfigError, closest

__all__ = [
    "OPTION_SPECS",
    "COMMON_SPECS",
    "SAMPLER_PARAMS",
    "SAMPLERS",
    "KEEP_UNKNOWN",
    "LIGHT_CHECKS",
]

#: sampler → {parameter: default}
SAMPLER_PARAMS: dict[str, dict[str, Any]] = {
    "nuts": {
        "step_size": 1.0,
        "target_accept": 0.8,
        "dense_mass": False,
        "max_tree_depth": 10,
        "warm_start": "none",
    },
    "hmc": {
        "step_size": 1.0,
        "target_accept": 0.8,
        "dense_mass": False,
        "num_integration_steps": 10,
        "warm_start": "none",
    },
    "mclmc": {
        "warm_start": "pathfinder",
        "steps_per_draw": None,
        "diagonal_preconditioning": True,
        "dense_mass": None,
        "desired_energy_var": 5e-4,
        "frac_tune1": 0.1,
        "frac_tune2": 0.1,
        "frac_tune3": 0.1,
    },
    "pathfinder": {"maxiter": 30, "maxcor": 10, "num_elbo_samples": 200},
    "sgld": {"step_size": 1e-3, "step_size_power": 0.0, "temperature": 1.0},
    "sghmc": {
        "step_size": 1e-3,
        "step_size_power": 0.0,
        "temperature": 1.0,
        "num_integration_steps": 10,
        "alpha": 0.01,
        "beta": 0.0,
    },
    "smc": {
        "num_particles": None,
        "target_ess": 0.5,
        "max_tempering_steps": 50,
        "num_mcmc_steps": 10,
        "step_size": 0.5,
        "num_integration_steps": 5,
        "init_scale": 1.0,
        "mass_matrix": "particles",
    },
    "svgd": {"num_updates": 200, "learning_rate": 0.1, "init_scale": 1.0},
}
SAMPLERS = tuple(SAMPLER_PARAMS)

#: BlackJAX algorithms its docs use that this backend does not run: why, and what works.
NOT_OFFERED: dict[str, str] = {
    "rmh": (
        "random-walk Rosenbluth-Metropolis-Hastings takes its proposal as a function "
        "(blackjax.mcmc.random_walk.normal(sigma)), which backend_options cannot carry; "
        "sample the same logdensity_fn with sampler 'nuts' (window adaptation tunes its "
        "step size and mass matrix, so there is no proposal scale to choose)"
    ),
}
_ONE_OF = "one of " + ", ".join(repr(s) for s in SAMPLERS)

#: the specs whose ``check`` is pure Python, so core's preflight runs it before the backend
#: is imported (the sampler's name: an unknown or refused one is answered from the YAML alone)
LIGHT_CHECKS = frozenset({"sampler"})


def _check_sampler(value: str) -> str:
    """``value`` if it names a sampler; else a ``ConfigError`` that lists them and, for a
    BlackJAX algorithm this backend does not run, says why and which sampler to use."""
    if value in SAMPLERS:
        return value
    field = "backend_options.sampler"
    reason = NOT_OFFERED.get(value.lower())
    if reason is not None:
        raise ConfigError(
            f"{field} {value!r} is not a sampler of the blackjax backend ({_ONE_OF}): {reason}",
            field=field,
        )
    raise ConfigError(
        f"{field} must be {_ONE_OF}, got {value!r}{closest(value, SAMPLERS)}", field=field
    )


#: The keys every sampler takes.
COMMON_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "sampler",
        "str",
        "nuts",
        "the BlackJAX algorithm",
        choices=SAMPLERS,
        check=_check_sampler,
        what=_ONE_OF,
    ),
    OptionSpec("x64", "bool", True, "sample in float64, as Stan and PyMC do (false: float32)"),
    RESUME_OPTION,
    draws_per_call_option(),
    compilation_cache_option(),
    OptionSpec("shuffle", "bool", True, "shuffle the minibatches of sgld / sghmc"),
    OptionSpec(
        "init_values",
        "mapping",
        None,
        "site → starting value for every chain of a NumPyro task (the other sites "
        "init_to_uniform); checked against the sites' shapes and supports",
        optional=True,
        what="a non-empty mapping of site names to starting values",
    ),
    INIT_JITTER_OPTION,
    OptionSpec(
        "init_strategy",
        "choice",
        "screened",
        "the chains' starts of a NumPyro task on nuts / hmc / mclmc: 'screened' (each chain "
        "the best of its uniform start and 16 more by log density) or 'uniform' (NumPyro's "
        "init_to_uniform, as before)",
        choices=("screened", "uniform"),
    ),
    num_data_option(),
)

#: What the preflight checks: the keys every sampler takes.
OPTION_SPECS = COMMON_SPECS
#: A sampler's own parameters pass the preflight; the adapter checks them by sampler.
KEEP_UNKNOWN = True
