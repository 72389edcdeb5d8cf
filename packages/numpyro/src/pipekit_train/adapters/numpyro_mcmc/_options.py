"""``backend_options`` of the ``numpyro-mcmc`` backend, validated before anything compiles."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    dense_mass: bool = False
    target_accept: float = 0.8
    max_tree_depth: int = 10
    num_steps: int | None = None
    trajectory_length: float | None = None
    regularize_mass_matrix: bool = True
    init_strategy: str = "uniform"
    init_values: dict[str, Any] = field(default_factory=dict)
    x64: bool = False
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


def parse_options(raw: dict[str, Any] | None) -> McmcOptions:
    """Check every key and value of ``backend_options`` (``ConfigError`` naming the key)."""
    raw = dict(raw or {})
    known = set(McmcOptions.__dataclass_fields__) - {"kernel_object"}
    for key in raw:
        if key not in known:
            raise ConfigError(
                f"backend_options.{key} is not an option of numpyro-mcmc"
                f"{closest(key, known)}; known: {', '.join(sorted(known))}",
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
        dense_mass=_bool(raw, "dense_mass", False),
        target_accept=float(target),
        max_tree_depth=int(_int(raw, "max_tree_depth", 10, 1) or 10),
        num_steps=_int(raw, "num_steps", None, 1),
        trajectory_length=None if trajectory is None else float(trajectory),
        regularize_mass_matrix=_bool(raw, "regularize_mass_matrix", True),
        init_strategy=_choice(raw, "init_strategy", "uniform", INIT_STRATEGIES),
        init_values=dict(init_values),
        x64=_bool(raw, "x64", False),
        resume=_choice(raw, "resume", "auto", ("auto", "never", "force")),
        steps_per_call=int(_int(raw, "steps_per_call", 100, 1) or 100),
        compilation_cache=raw.get("compilation_cache"),
        kernel_object=kernel_object,
    )
