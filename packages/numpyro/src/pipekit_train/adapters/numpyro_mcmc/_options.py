"""``backend_options`` of the ``numpyro-mcmc`` backend, declared as specs (``OPTION_SPECS``)
and checked by core's one parser before anything compiles. ``init_values`` is checked
against the model's sites (shape, support) by bayes' ``check_init_values`` once traced."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from pipekit_train.adapters._numpyro_mcmc_options import (
    ALIASES,
    INIT_STRATEGIES,
    KERNELS,
)
from pipekit_train.adapters._numpyro_mcmc_options import OPTION_SPECS as _DECLARED
from pipekit_train.adapters.bayes import parse_init_values
from pipekit_train.engine import (
    OptionSpec,
    parse_backend_options,
)
from pipekit_train.errors import ConfigError, closest

__all__ = [
    "McmcOptions",
    "parse_options",
    "is_user_kernel",
    "INIT_STRATEGIES",
    "OPTION_SPECS",
    "ALIASES",
]


@dataclass(frozen=True)
class McmcOptions:
    """The parsed options; see the backend's module docstring for each one's meaning."""

    kernel: str = "nuts"
    chain_method: str = "vectorized"
    #: True / False, or site groups: [["a", "b"], ["c"]] → NumPyro's [("a", "b"), ("c",)]
    dense_mass: Any = False
    target_accept: float = 0.8
    max_tree_depth: int = 10
    step_size: float = 1.0
    adapt_step_size: bool = True
    adapt_mass_matrix: bool = True
    #: None, one array over all latent sites, or {"a": ..., "a,b": ...} (site groups)
    inverse_mass_matrix: Any = None
    forward_mode_differentiation: bool = False
    init_jitter: float = 0.0
    num_steps: int | None = None
    trajectory_length: float | None = None
    regularize_mass_matrix: bool = True
    init_strategy: str = "screened"
    init_values: dict[str, Any] = field(default_factory=dict)
    #: float64 by default, as Stan and PyMC sample (False: float32, faster, less exact)
    x64: bool = True
    resume: str = "auto"
    steps_per_call: int = 100
    compilation_cache: Any = None
    #: A user-built ``numpyro.infer`` HMC/NUTS kernel given as ``kernel`` (Python only;
    #: ``kernel`` then holds its name). Not an option key of its own.
    kernel_object: Any = None


def is_user_kernel(value: Any) -> bool:
    """Whether ``backend_options["kernel"]`` is an object rather than a kernel name."""
    return value is not None and not isinstance(value, str)


def _field(name: str) -> str:
    return f"backend_options.{name}"


def _kernel(value: Any) -> Any:
    """``'nuts'`` / ``'hmc'``, or the user's own NumPyro kernel object (``_user_kernel``)."""
    if is_user_kernel(value) or value in KERNELS:
        return value
    hint = closest(str(value), KERNELS)
    raise ConfigError(
        f"{_field('kernel')} = {value!r} is not one of {', '.join(KERNELS)}{hint} (or a "
        "numpyro.infer NUTS / HMC kernel object)",
        field=_field("kernel"),
    )


def _dense_mass(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    groups = value if isinstance(value, (list, tuple)) else None
    if not groups or not all(
        isinstance(g, (list, tuple)) and g and all(isinstance(n, str) for n in g) for g in groups
    ):
        raise ConfigError(
            f"{_field('dense_mass')} must be true, false or a list of site groups, e.g. "
            f"[['mu', 'tau'], ['theta']] (each group one dense block); got {value!r}",
            field=_field("dense_mass"),
        )
    return [tuple(g) for g in groups]


def _inverse_mass_matrix(value: Any) -> Any:
    import numpy as np

    field_ = _field("inverse_mass_matrix")
    try:
        if isinstance(value, dict):
            out = {}
            for key, v in value.items():
                names = tuple(key) if isinstance(key, tuple) else tuple(str(key).split(","))
                out[tuple(n.strip() for n in names)] = np.asarray(v, dtype=float)
            return out
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{field_} must be an array (a diagonal, or a dense matrix) over all latent sites, "
            "or a mapping from a site (or 'a,b' site group) to its block; got "
            f"{value!r} ({exc})",
            field=field_,
        ) from exc


def _init_values(value: Any) -> dict[str, Any]:
    """Numbers under site names (bayes' check); the values kept as given (the resume guard
    records them)."""
    parse_init_values(value, allow_empty=True)
    return dict(value)


#: Every key numpyro-mcmc takes (declared in the light spec module; the reference page is
#: written from these), with the checks that need more than the spec attached.
_CHECKS = {
    "kernel": _kernel,
    "dense_mass": _dense_mass,
    "inverse_mass_matrix": _inverse_mass_matrix,
    "init_values": _init_values,
}
OPTION_SPECS: tuple[OptionSpec, ...] = tuple(
    replace(spec, check=_CHECKS[spec.name]) if spec.name in _CHECKS else spec for spec in _DECLARED
)


def parse_options(raw: dict[str, Any] | None) -> McmcOptions:
    """Check every key and value of ``backend_options`` (``ConfigError`` naming the key).

    NumPyro's and BlackJAX's spellings (``target_accept_prob``, ``max_num_doublings``,
    ``num_integration_steps``) are accepted for ``target_accept``, ``max_tree_depth``
    and ``num_steps``.
    """
    parsed = parse_backend_options(raw, OPTION_SPECS, backend="numpyro-mcmc")
    values = dict(parsed.values)
    kernel_object = values["kernel"]
    if is_user_kernel(kernel_object):  # the user's own kernel (issue 20): _user_kernel checks it
        from numpyro.infer import NUTS

        values["kernel"] = "nuts" if isinstance(kernel_object, NUTS) else "hmc"
    else:
        kernel_object = None
    for name in ("num_steps", "trajectory_length"):
        if kernel_object is None and values["kernel"] == "nuts" and values[name] is not None:
            raise ConfigError(
                f"{_field(name)} applies to kernel 'hmc' only; NUTS chooses its own path "
                "length (set backend_options.kernel = 'hmc' to use it)",
                field=_field(name),
            )
    return McmcOptions(**values, kernel_object=kernel_object)
