"""``backend_options`` of the ``blackjax`` backend, validated before anything compiles.

Flat keys: ``sampler`` picks the algorithm; each sampler takes its own parameters
(``SAMPLER_PARAMS``), and a parameter of another sampler is a ``ConfigError``
naming it and the samplers that do take it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipekit_train.adapters.bayes import SAMPLER_ALIASES, resolve_aliases
from pipekit_train.engine import RESUME_MODES
from pipekit_train.errors import ConfigError, closest

__all__ = [
    "BlackjaxOptions",
    "parse_options",
    "check_counts",
    "SAMPLERS",
    "SAMPLER_PARAMS",
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
        "diagonal_preconditioning": True,
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
COMMON: dict[str, Any] = {
    "sampler": "nuts",
    "x64": True,
    "resume": "auto",
    "steps_per_call": 100,
    "compilation_cache": None,
    "shuffle": True,
    "init_values": None,
    "init_jitter": 0.0,
    "num_data": None,
}
_POSITIVE = {"step_size", "desired_energy_var", "temperature", "init_scale", "learning_rate"}
_FRACTIONS = {"frac_tune1", "frac_tune2", "frac_tune3"}
_INTS = {
    "max_tree_depth",
    "num_integration_steps",
    "steps_per_call",
    "maxiter",
    "maxcor",
    "num_elbo_samples",
    "max_tempering_steps",
    "num_mcmc_steps",
    "num_updates",
}
_BOOLS = {"dense_mass", "diagonal_preconditioning", "x64", "shuffle"}


@dataclass(frozen=True)
class BlackjaxOptions:
    """The parsed options: the common ones, and ``params`` of the chosen sampler."""

    sampler: str = "nuts"
    params: dict[str, Any] = field(default_factory=dict)
    #: float64 by default, as Stan and PyMC sample (False: float32)
    x64: bool = True
    resume: str = "auto"
    steps_per_call: int = 100
    compilation_cache: Any = None
    shuffle: bool = True
    #: site → starting value for every chain of a NumPyro task (the other sites
    #: ``init_to_uniform``), as numpyro-mcmc's ``init_values``; ``None``: all uniform.
    init_values: dict[str, Any] | None = None
    #: sd of each chain's own Normal jitter around ``init_values`` (unconstrained space)
    init_jitter: float = 0.0
    #: sgld / sghmc: the dataset size N scaling each minibatch (required with a stream;
    #: checked by core's ``pipekit_train.jax._stream``)
    num_data: int | None = None


def _where(name: str) -> str:
    return f"backend_options.{name}"


def _bad(name: str, what: str, value: Any) -> ConfigError:
    return ConfigError(f"{_where(name)} must be {what}, got {value!r}", field=_where(name))


def _check_value(name: str, value: Any) -> Any:
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if name in _BOOLS:
        if not isinstance(value, bool):
            raise _bad(name, "true or false", value)
    elif name in _INTS:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise _bad(name, "an integer >= 1", value)
    elif name == "num_particles":
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or value < 2
        ):
            raise _bad(name, "an integer >= 2 (or unset: num_samples)", value)
    elif name == "target_ess":
        if not number or not 0 < value <= 1:
            raise _bad(name, "a fraction in (0, 1]", value)
        value = float(value)
    elif name == "target_accept":
        if not number or not 0 < value < 1:
            raise _bad(name, "a number in (0, 1)", value)
        value = float(value)
    elif name in _FRACTIONS:
        if not number or not 0 <= value < 1:
            raise _bad(name, "a fraction in [0, 1)", value)
        value = float(value)
    elif name in _POSITIVE:
        if not number or value <= 0:
            raise _bad(name, "a positive number", value)
        value = float(value)
    elif name == "step_size_power":
        if not number or not 0 <= value <= 1:
            raise _bad(name, "a number in [0, 1] (0: constant step size)", value)
        value = float(value)
    elif name in ("alpha", "beta"):
        if not number or value < 0:
            raise _bad(name, "a number >= 0", value)
        value = float(value)
    elif name == "mass_matrix" and value not in ("particles", "identity"):
        raise _bad(name, "'particles' (the particles' variance) or 'identity'", value)
    elif name == "warm_start" and value not in ("none", "pathfinder"):
        raise _bad(name, "'none' or 'pathfinder'", value)
    elif name == "resume" and value not in RESUME_MODES:
        raise _bad(name, "one of " + ", ".join(RESUME_MODES), value)
    elif name == "init_jitter":
        if not number or value < 0:
            raise _bad(name, "a number >= 0 (0: every chain exactly at init_values)", value)
        value = float(value)
    elif name == "init_values" and value is not None:
        value = _init_values(value)
    return value


def _init_values(value: Any) -> dict[str, Any]:
    """``{site: value}`` with numeric, finite values (as float64 NumPy arrays)."""
    import numpy as np

    if not isinstance(value, dict) or not value:
        raise _bad("init_values", "a non-empty mapping of site names to starting values", value)
    out = {}
    for site, v in value.items():
        try:
            a = np.asarray(v, dtype=float)
        except (TypeError, ValueError):
            raise _bad(f"init_values.{site}", "a number or an array of numbers", v) from None
        if not isinstance(site, str) or not np.all(np.isfinite(a)):
            raise _bad(f"init_values.{site}", "finite numbers under a site name", v)
        out[site] = a
    return out


def parse_options(raw: dict[str, Any] | None) -> BlackjaxOptions:
    """Check every key and value of ``backend_options`` (``ConfigError`` naming the key).

    NumPyro's spellings are accepted (``SAMPLER_ALIASES``): ``target_accept_prob`` for
    ``target_accept``; BlackJAX's own ``max_num_doublings`` for ``max_tree_depth``.
    """
    raw = resolve_aliases(raw or {}, SAMPLER_ALIASES, "blackjax")
    sampler = raw.get("sampler", "nuts")
    if sampler not in SAMPLERS:
        raise ConfigError(
            f"backend_options.sampler = {sampler!r} is not a BlackJAX sampler of this backend"
            f"{closest(str(sampler), SAMPLERS)}; valid: {', '.join(SAMPLERS)}",
            field="backend_options.sampler",
        )
    own = SAMPLER_PARAMS[sampler]
    every = set(COMMON).union(*SAMPLER_PARAMS.values())
    for key in raw:
        if key in COMMON or key in own:
            continue
        if key in every:
            takers = [s for s, p in SAMPLER_PARAMS.items() if key in p]
            raise ConfigError(
                f"backend_options.{key} is not a parameter of sampler {sampler!r} (it takes "
                f"{', '.join(sorted(own))}); {key} belongs to {', '.join(takers)}",
                field=_where(key),
            )
        raise ConfigError(
            f"backend_options.{key} is not an option of blackjax{closest(key, every)}; "
            f"sampler {sampler!r} takes {', '.join(sorted(own))}, every sampler "
            f"{', '.join(sorted(set(COMMON)))}",
            field=_where(key),
        )
    params = {k: _check_value(k, raw.get(k, d)) for k, d in own.items()}
    common = {k: _check_value(k, raw.get(k, d)) for k, d in COMMON.items() if k != "sampler"}
    return BlackjaxOptions(sampler=str(sampler), params=params, **common)


def check_counts(options: BlackjaxOptions, num_samples: int) -> None:
    """The particle samplers' count checks (the task's counts are known only at run time):
    SVGD's particles are its ``num_samples`` draws, and a kernel over one particle is
    degenerate, so both need at least two."""
    if options.sampler == "svgd" and num_samples < 2:
        raise ConfigError(
            f"sampler 'svgd' moves num_samples particles (its draws are the final particles), "
            f"so task.num_samples must be >= 2, got {num_samples}",
            field="task.num_samples",
        )
