"""``backend_options`` of the ``blackjax`` backend, validated before anything compiles.

Flat keys: ``sampler`` picks the algorithm; each sampler takes its own parameters
(``SAMPLER_PARAMS``), and a parameter of another sampler is a ``ConfigError``
naming it and the samplers that do take it. Every key is declared as a spec
(``COMMON_SPECS``, ``sampler_specs``) and checked by core's one parser.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pipekit_train.adapters._blackjax_options import COMMON_SPECS as _DECLARED_COMMON
from pipekit_train.adapters._blackjax_options import SAMPLER_PARAMS, SAMPLERS
from pipekit_train.adapters.bayes import (
    SAMPLER_ALIASES,
    parse_init_values,
    resolve_aliases,
)
from pipekit_train.engine import (
    OptionSpec,
    parse_backend_options,
)
from pipekit_train.errors import ConfigError, closest

__all__ = [
    "BlackjaxOptions",
    "parse_options",
    "check_counts",
    "SAMPLERS",
    "SAMPLER_PARAMS",
    "COMMON_SPECS",
    "sampler_specs",
]


def _init_values(value: Any) -> dict[str, Any]:
    return parse_init_values(value)


#: The keys every sampler takes (declared in the light spec module), ``init_values``
#: checked here.
COMMON_SPECS: tuple[OptionSpec, ...] = tuple(
    replace(spec, check=_init_values) if spec.name == "init_values" else spec
    for spec in _DECLARED_COMMON
)
COMMON: dict[str, Any] = {spec.name: spec.default for spec in COMMON_SPECS}


def _positive(name: str, doc: str) -> OptionSpec:
    return OptionSpec(name, "float", None, doc, low=0, low_open=True, what="a positive number")


def _count(name: str, doc: str, low: int = 1) -> OptionSpec:
    return OptionSpec(name, "int", None, doc, low=low)


def _fraction(name: str, doc: str) -> OptionSpec:
    return OptionSpec(
        name, "float", None, doc, low=0, high=1, high_open=True, what="a fraction in [0, 1)"
    )


def _nonnegative(name: str, doc: str) -> OptionSpec:
    return OptionSpec(name, "float", None, doc, low=0)


def _flag(name: str, doc: str) -> OptionSpec:
    return OptionSpec(name, "bool", None, doc)


#: Every sampler parameter's spec (the default comes from ``SAMPLER_PARAMS``, per sampler).
_PARAMS: dict[str, OptionSpec] = {
    s.name: s
    for s in (
        _positive("step_size", "integrator step size"),
        OptionSpec(
            "target_accept",
            "float",
            None,
            "window adaptation's target acceptance",
            low=0,
            high=1,
            low_open=True,
            high_open=True,
        ),
        _flag("dense_mass", "adapt a dense mass matrix"),
        _count("max_tree_depth", "NUTS's maximum tree depth"),
        OptionSpec(
            "warm_start",
            "choice",
            None,
            "start of the adaptation",
            choices=("none", "pathfinder"),
            what="'none' or 'pathfinder'",
        ),
        _count("num_integration_steps", "leapfrog steps per proposal"),
        OptionSpec(
            "steps_per_draw",
            "int",
            None,
            "MCLMC integrator steps per draw (default: the tuned L / step_size, 1 to 64)",
            low=1,
            optional=True,
            what="an integer >= 1 (or unset: the tuned L / step_size)",
        ),
        _flag("diagonal_preconditioning", "MCLMC's diagonal preconditioner"),
        _positive("desired_energy_var", "MCLMC's target energy variance"),
        _fraction("frac_tune1", "MCLMC tuning, share of stage 1"),
        _fraction("frac_tune2", "MCLMC tuning, share of stage 2"),
        _fraction("frac_tune3", "MCLMC tuning, share of stage 3"),
        _count("maxiter", "pathfinder's L-BFGS iterations"),
        _count("maxcor", "pathfinder's L-BFGS history"),
        _count("num_elbo_samples", "pathfinder's ELBO draws"),
        OptionSpec(
            "step_size_power",
            "float",
            None,
            "SG-MCMC step-size decay exponent",
            low=0,
            high=1,
            what="a number in [0, 1] (0: constant step size)",
        ),
        _positive("temperature", "SG-MCMC temperature"),
        _nonnegative("alpha", "SGHMC friction"),
        _nonnegative("beta", "SGHMC noise estimate"),
        OptionSpec(
            "num_particles",
            "int",
            None,
            "SMC particles (default: num_samples)",
            low=2,
            optional=True,
            what="an integer >= 2 (or unset: num_samples)",
        ),
        OptionSpec(
            "target_ess",
            "float",
            None,
            "SMC tempering's target ESS",
            low=0,
            high=1,
            low_open=True,
            what="a fraction in (0, 1]",
        ),
        _count("max_tempering_steps", "SMC's tempering steps at most"),
        _count("num_mcmc_steps", "SMC's HMC moves per step"),
        _positive("init_scale", "sd of the initial particles"),
        OptionSpec(
            "mass_matrix",
            "choice",
            None,
            "SMC's HMC mass matrix",
            choices=("particles", "identity"),
            what="'particles' (the particles' variance) or 'identity'",
        ),
        _positive("learning_rate", "SVGD's step size"),
        _count("num_updates", "SVGD updates"),
    )
}


#: A parameter whose meaning differs on one sampler: its spec there.
_OWN_SPECS: dict[tuple[str, str], OptionSpec] = {
    ("mclmc", "dense_mass"): OptionSpec(
        "dense_mass",
        "bool",
        None,
        "measure each chain's covariance in warmup and precondition by it "
        "(default: up to 100 dimensions)",
        optional=True,
        what="true or false (or unset: dense up to 100 dimensions, diagonal above)",
    ),
}


def sampler_specs(sampler: str) -> tuple[OptionSpec, ...]:
    """The specs of ``sampler``'s own parameters, with its defaults."""
    return tuple(
        replace(
            _OWN_SPECS.get((sampler, name), _PARAMS[name]),
            default=default,
            aliases=tuple(a for a, c in SAMPLER_ALIASES.items() if c == name),
        )
        for name, default in SAMPLER_PARAMS[sampler].items()
    )


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
    #: a NumPyro task's starts on nuts / hmc: "screened" (bayes.screened_positions) or
    #: "uniform" (init_to_uniform's draw, as numpyro-mcmc's "uniform")
    init_strategy: str = "screened"
    #: sgld / sghmc: the dataset size N scaling each minibatch (required with a stream;
    #: checked by core's ``pipekit_train.engine``)
    num_data: int | None = None


def parse_options(raw: dict[str, Any] | None) -> BlackjaxOptions:
    """Check every key and value of ``backend_options`` (``ConfigError`` naming the key).

    NumPyro's spellings are accepted (``SAMPLER_ALIASES``): ``target_accept_prob`` for
    ``target_accept``; BlackJAX's own ``max_num_doublings`` for ``max_tree_depth``.
    """
    if isinstance(raw, dict):  # one sampler's alias may name another sampler's parameter
        raw = resolve_aliases(raw, SAMPLER_ALIASES, "blackjax")
    common = parse_backend_options(raw, COMMON_SPECS, backend="blackjax", keep_unknown=True)
    sampler = common["sampler"]
    own_specs = sampler_specs(sampler)
    parsed = parse_backend_options(common.rest, own_specs, backend="blackjax", keep_unknown=True)
    own = SAMPLER_PARAMS[sampler]
    every = set(COMMON).union(*SAMPLER_PARAMS.values())
    for key in parsed.rest:
        if key in every or key in SAMPLER_ALIASES:
            canonical = SAMPLER_ALIASES.get(key, key)
            takers = [s for s, p in SAMPLER_PARAMS.items() if canonical in p]
            raise ConfigError(
                f"backend_options.{key} is not a parameter of sampler {sampler!r} (it takes "
                f"{', '.join(sorted(own))}); {key} belongs to {', '.join(takers)}",
                field=f"backend_options.{key}",
            )
        raise ConfigError(
            f"backend_options.{key} is not an option of blackjax{closest(key, every)}; "
            f"sampler {sampler!r} takes {', '.join(sorted(own))}, every sampler "
            f"{', '.join(sorted(set(COMMON)))}",
            field=f"backend_options.{key}",
        )
    values = {k: v for k, v in common.values.items() if k != "sampler"}
    return BlackjaxOptions(sampler=str(sampler), params=dict(parsed.values), **values)


def check_counts(options: BlackjaxOptions, num_samples: int, num_warmup: int = 0) -> None:
    """The count checks (the task's counts are known only at run time): SVGD's particles are
    its ``num_samples`` draws, and a kernel over one particle is degenerate, so both need at
    least two; mclmc's ``dense_mass: true`` is measured in warmup, so it needs one."""
    if options.sampler == "mclmc" and options.params.get("dense_mass") and num_warmup < 1:
        raise ConfigError(
            "backend_options.dense_mass true measures each chain's covariance during warmup, "
            "but task.num_warmup is 0: set num_warmup >= 1, or leave dense_mass unset (no "
            "warmup samples with the unit diagonal)",
            field="backend_options.dense_mass",
        )
    if options.sampler == "svgd" and num_samples < 2:
        raise ConfigError(
            f"sampler 'svgd' moves num_samples particles (its draws are the final particles), "
            f"so task.num_samples must be >= 2, got {num_samples}",
            field="task.num_samples",
        )
