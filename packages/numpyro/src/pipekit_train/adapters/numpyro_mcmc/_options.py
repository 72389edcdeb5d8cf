"""``backend_options`` of the ``numpyro-mcmc`` backend, validated before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pipekit_train.adapters.bayes import SAMPLER_ALIASES, resolve_aliases
from pipekit_train.engine import RESUME_MODES
from pipekit_train.errors import ConfigError, closest

from ._user_kernel import is_user_kernel

__all__ = ["McmcOptions", "parse_options", "INIT_STRATEGIES"]

INIT_STRATEGIES = ("uniform", "median", "mean", "feasible", "sample")
KERNELS = ("nuts", "hmc")
CHAIN_METHODS = ("vectorized", "sequential")


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
    init_strategy: str = "uniform"
    init_values: dict[str, Any] = field(default_factory=dict)
    #: float64 by default, as Stan and PyMC sample (False: float32, faster, less exact)
    x64: bool = True
    resume: str = "auto"
    steps_per_call: int = 100
    compilation_cache: Any = None
    #: A user-built ``numpyro.infer`` HMC/NUTS kernel given as ``kernel`` (Python only;
    #: ``kernel`` then holds its name). Not an option key of its own.
    kernel_object: Any = None


def _field(name: str) -> str:
    return f"backend_options.{name}"


def _bool(raw: dict[str, Any], name: str, default: bool) -> bool:
    value = raw.get(name, default)
    if not isinstance(value, bool):
        raise ConfigError(
            f"{_field(name)} must be true or false, got {value!r}", field=_field(name)
        )
    return value


def _int(raw: dict[str, Any], name: str, default: int | None, low: int) -> int | None:
    value = raw.get(name, default)
    if value is None and default is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low:
        raise ConfigError(
            f"{_field(name)} must be an integer >= {low}, got {value!r}", field=_field(name)
        )
    return value


def _choice(raw: dict[str, Any], name: str, default: str, allowed: tuple[str, ...]) -> str:
    value = raw.get(name, default)
    if value not in allowed:
        hint = closest(str(value), allowed)
        raise ConfigError(
            f"{_field(name)} = {value!r} is not one of {', '.join(allowed)}{hint}",
            field=_field(name),
        )
    return str(value)


#: The other libraries' spellings numpyro-mcmc accepts (``SAMPLER_ALIASES`` plus HMC's
#: BlackJAX name for the leapfrog steps).
ALIASES = {**SAMPLER_ALIASES, "num_integration_steps": "num_steps"}


def _number(raw: dict[str, Any], name: str, default: float, low: float, strict: bool) -> float:
    value = raw.get(name, default)
    bad = isinstance(value, bool) or not isinstance(value, (int, float))
    if bad or (value <= low if strict else value < low):
        what = f"a number {'>' if strict else '>='} {low:g}"
        raise ConfigError(f"{_field(name)} must be {what}, got {value!r}", field=_field(name))
    return float(value)


def _dense_mass(raw: dict[str, Any]) -> Any:
    value = raw.get("dense_mass", False)
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


def _inverse_mass_matrix(raw: dict[str, Any]) -> Any:
    import numpy as np

    value = raw.get("inverse_mass_matrix")
    if value is None:
        return None
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


def parse_options(raw: dict[str, Any] | None) -> McmcOptions:
    """Check every key and value of ``backend_options`` (``ConfigError`` naming the key).

    NumPyro's and BlackJAX's spellings (``target_accept_prob``, ``max_num_doublings``,
    ``num_integration_steps``) are accepted for ``target_accept``, ``max_tree_depth``
    and ``num_steps``.
    """
    raw = resolve_aliases(raw or {}, ALIASES, "numpyro-mcmc")
    known = set(McmcOptions.__dataclass_fields__) - {"kernel_object"}
    for key in raw:
        if key not in known:
            raise ConfigError(
                f"backend_options.{key} is not an option of numpyro-mcmc"
                f"{closest(key, known | set(ALIASES))}; known: {', '.join(sorted(known))} "
                f"(also accepted: {', '.join(f'{a} for {c}' for a, c in ALIASES.items())})",
                field=_field(key),
            )
    target = raw.get("target_accept", 0.8)
    if isinstance(target, bool) or not isinstance(target, (int, float)) or not 0 < target < 1:
        raise ConfigError(
            f"{_field('target_accept')} must be a number in (0, 1), got {target!r}",
            field=_field("target_accept"),
        )
    trajectory = raw.get("trajectory_length")
    if trajectory is not None and (
        isinstance(trajectory, bool) or not isinstance(trajectory, (int, float)) or trajectory <= 0
    ):
        raise ConfigError(
            f"{_field('trajectory_length')} must be a positive number, got {trajectory!r}",
            field=_field("trajectory_length"),
        )
    init_values = raw.get("init_values", {})
    if not isinstance(init_values, dict):
        raise ConfigError(
            f"{_field('init_values')} must map site names to starting values, got {init_values!r}",
            field=_field("init_values"),
        )
    kernel_object = raw.get("kernel")
    if is_user_kernel(kernel_object):  # the user's own kernel (issue 20): _user_kernel checks it
        from numpyro.infer import NUTS

        kernel = "nuts" if isinstance(kernel_object, NUTS) else "hmc"
    else:
        kernel_object = None
        kernel = _choice(raw, "kernel", "nuts", KERNELS)
    for name in ("num_steps", "trajectory_length"):
        if kernel_object is None and kernel == "nuts" and raw.get(name) is not None:
            raise ConfigError(
                f"{_field(name)} applies to kernel 'hmc' only; NUTS chooses its own path "
                "length (set backend_options.kernel = 'hmc' to use it)",
                field=_field(name),
            )
    return McmcOptions(
        kernel=kernel,
        chain_method=_choice(raw, "chain_method", "vectorized", CHAIN_METHODS),
        dense_mass=_dense_mass(raw),
        target_accept=float(target),
        max_tree_depth=int(_int(raw, "max_tree_depth", 10, 1) or 10),
        num_steps=_int(raw, "num_steps", None, 1),
        trajectory_length=None if trajectory is None else float(trajectory),
        regularize_mass_matrix=_bool(raw, "regularize_mass_matrix", True),
        step_size=_number(raw, "step_size", 1.0, 0.0, strict=True),
        adapt_step_size=_bool(raw, "adapt_step_size", True),
        adapt_mass_matrix=_bool(raw, "adapt_mass_matrix", True),
        inverse_mass_matrix=_inverse_mass_matrix(raw),
        forward_mode_differentiation=_bool(raw, "forward_mode_differentiation", False),
        init_jitter=_number(raw, "init_jitter", 0.0, 0.0, strict=False),
        init_strategy=_choice(raw, "init_strategy", "uniform", INIT_STRATEGIES),
        init_values=dict(init_values),
        x64=_bool(raw, "x64", True),
        resume=_choice(raw, "resume", "auto", RESUME_MODES),
        steps_per_call=int(_int(raw, "steps_per_call", 100, 1) or 100),
        compilation_cache=raw.get("compilation_cache"),
        kernel_object=kernel_object,
    )
