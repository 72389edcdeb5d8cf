"""Core's neutral optimiser vocabulary (``pipekit_train.optimizers``) → ``torch.optim``.

The spec is parsed by core (``parse_optimizer_config``), then
``require_supported`` names what this backend maps. Keyword arguments use the
optax names of the vocabulary (``b1``, ``b2``, ``eps``, ``momentum``,
``nesterov``, ``decay`` for RMSprop) or the torch names (``betas``, ``alpha``,
``amsgrad``, …); anything else is a ``ConfigError`` naming the key.
``weight_decay`` is torch's own argument: decoupled for ``adamw``, classic L2 for
the others — the meaning the vocabulary gives it. ``adamw`` without
``weight_decay`` uses optax's default 1e-4 (torch's own default is 1e-2), so
the same config means the same run on every backend. ``clip_norm`` becomes the
Trainer's ``gradient_clip_val`` (global norm).

A schedule becomes a ``LambdaLR`` over a base rate of 1.0, stepped once per
optimiser step, whose factor is the schedule's value (formulas as in optax).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any

import torch

from pipekit_train.errors import ConfigError, closest
from pipekit_train.optimizers import OptimizerSpec, parse_optimizer_config, require_supported

__all__ = ["SUPPORTED", "parse_spec", "build_optimizer", "schedule_fn"]

_OPTIMIZERS: dict[str, Callable[..., torch.optim.Optimizer]] = {
    "adam": torch.optim.Adam,
    "adamw": torch.optim.AdamW,
    "sgd": torch.optim.SGD,
    "rmsprop": torch.optim.RMSprop,
    "adagrad": torch.optim.Adagrad,
    "adamax": torch.optim.Adamax,
    "nadam": torch.optim.NAdam,
    "radam": torch.optim.RAdam,
    "amsgrad": torch.optim.Adam,
}

#: The vocabulary names this backend maps.
SUPPORTED: frozenset[str] = frozenset(_OPTIMIZERS)

_OPTAX_DEFAULTS: dict[str, dict[str, Any]] = {
    "adamw": {"weight_decay": 1e-4},
    "rmsprop": {"alpha": 0.9},  # optax's decay
    "amsgrad": {"amsgrad": True},
}


def _name(cls: Any) -> str:
    return str(getattr(cls, "__name__", cls))


def parse_spec(config: Mapping[str, Any], max_steps: int) -> OptimizerSpec:
    """Core's spec of ``config``, refused here if this backend cannot map it."""
    spec = parse_optimizer_config(config, max_steps=max_steps)
    require_supported(spec, SUPPORTED, backend="lightning")
    return spec


def _torch_kwargs(spec: OptimizerSpec) -> dict[str, Any]:
    cls = _OPTIMIZERS[spec.name]
    allowed = set(inspect.signature(cls.__init__).parameters) - {"self", "params", "lr"}
    out: dict[str, Any] = dict(_OPTAX_DEFAULTS.get(spec.name, {}))
    kw = dict(spec.kwargs)
    if "b1" in kw or "b2" in kw:
        if "betas" not in allowed:
            bad = "b1" if "b1" in kw else "b2"
            raise ConfigError(
                f"optimizer_config.{bad}: torch.optim.{_name(cls)} has no betas; remove it",
                field=f"optimizer_config.{bad}",
            )
        b1, b2 = kw.pop("b1", 0.9), kw.pop("b2", 0.999)
        out["betas"] = (float(b1), float(b2))
    if spec.name == "rmsprop" and "decay" in kw:
        out["alpha"] = float(kw.pop("decay"))
    if spec.name == "sgd" and kw.get("momentum") is None:
        kw.pop("momentum", None)
    for key, value in kw.items():
        if key not in allowed:
            raise ConfigError(
                f"optimizer_config.{key}: torch.optim.{_name(cls)} has no argument {key!r}"
                f"{closest(key, sorted(allowed | {'b1', 'b2'}))}; it takes: "
                f"{', '.join(sorted(allowed))} (or the optax names b1, b2)",
                field=f"optimizer_config.{key}",
            )
        out[key] = value
    if spec.weight_decay is not None:
        out["weight_decay"] = spec.weight_decay
    return out


def build_optimizer(
    spec: OptimizerSpec, params: Any
) -> tuple[torch.optim.Optimizer, Callable[[int], float] | None]:
    """The torch optimiser for ``spec`` and, for a schedule, its ``step -> lr`` function."""
    cls = _OPTIMIZERS[spec.name]
    kwargs = _torch_kwargs(spec)
    if isinstance(spec.lr, dict):
        fn = schedule_fn(spec.lr)
        return cls(params, lr=1.0, **kwargs), fn
    return cls(params, lr=float(spec.lr), **kwargs), None


def check_optimizer(spec: OptimizerSpec) -> None:
    """Build the optimiser on a dummy parameter so bad keyword values fail before ``fit``."""
    try:
        build_optimizer(spec, [torch.nn.Parameter(torch.zeros(1))])
    except ConfigError:
        raise
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"optimizer_config: torch.optim.{_name(_OPTIMIZERS[spec.name])} refuses it: {exc}",
            field="optimizer_config",
        ) from exc


def schedule_fn(lr: Mapping[str, Any]) -> Callable[[int], float]:
    """``step -> learning rate`` for a normalised schedule dict (optax's formulas)."""
    name = lr["schedule"]
    p = dict(lr)
    if name == "constant":
        value = float(p["value"])
        return lambda step: value
    if name == "cosine_decay":
        return _cosine(
            float(p["init_value"]),
            int(p["decay_steps"]),
            p.get("alpha", 0.0),
            p.get("exponent", 1.0),
        )
    if name == "warmup_cosine_decay":
        init, peak = float(p["init_value"]), float(p["peak_value"])
        warm, total = int(p["warmup_steps"]), int(p["decay_steps"])
        end = float(p.get("end_value", 0.0))
        cos = _cosine(peak, total - warm, end / peak, p.get("exponent", 1.0))

        def warmup_cosine(step: int) -> float:
            if step < warm:
                return init + (peak - init) * step / warm
            return cos(step - warm)

        return warmup_cosine
    if name == "exponential_decay":
        init, steps, rate = (
            float(p["init_value"]),
            int(p["transition_steps"]),
            float(p["decay_rate"]),
        )
        begin, stair = int(p.get("transition_begin", 0)), bool(p.get("staircase", False))
        floor: float | None = None if p.get("end_value") is None else float(p["end_value"])

        def exponential(step: int) -> float:
            count = step - begin
            if count <= 0:
                return init
            power = count / steps
            value = init * rate ** (math.floor(power) if stair else power)
            if floor is not None:
                value = max(value, floor) if rate < 1 else min(value, floor)
            return value

        return exponential
    if name == "linear":
        init, end = float(p["init_value"]), float(p["end_value"])
        steps, begin = int(p["transition_steps"]), int(p.get("transition_begin", 0))

        def linear(step: int) -> float:
            count = min(max(step - begin, 0), steps)
            return (init - end) * (1 - count / steps) + end

        return linear
    if name == "piecewise_constant":
        init = float(p["init_value"])
        bounds = sorted((int(b), float(s)) for b, s in p["boundaries_and_scales"].items())

        def piecewise(step: int) -> float:
            value = init
            for boundary, scale in bounds:
                if step >= boundary:
                    value *= scale
            return value

        return piecewise
    raise ConfigError(  # pragma: no cover - core validates the names
        f"optimizer_config.lr.schedule: the lightning backend has no schedule {name!r}",
        field="optimizer_config.lr.schedule",
    )


def _cosine(init: float, steps: int, alpha: float, exponent: float) -> Callable[[int], float]:
    alpha, exponent = float(alpha), float(exponent)

    def cosine(step: int) -> float:
        count = min(step, steps)
        cos = 0.5 * (1 + math.cos(math.pi * count / steps))
        return init * ((1 - alpha) * cos**exponent + alpha)

    return cosine
