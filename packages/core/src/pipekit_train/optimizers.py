"""The backend-neutral ``optimizer_config`` vocabulary and its pure-Python validation.

This module imports no array library: ``TrainingLoop`` calls
:func:`validate_optimizer_config` at construction time, in installs that have no
JAX at all, so that a mistake in the optimiser config is reported before any
backend is loaded. Core owns the *structure* (a name from the vocabulary, ``lr``
as a positive number or a schedule, the common options) and normalises it into
an :class:`OptimizerSpec`; each backend maps the spec onto its own library
(``pipekit_train.jax.optim`` onto optax, the Lightning backend onto
``torch.optim``, the Keras backend onto ``keras.optimizers``) and calls
:func:`require_supported` at ``run()``, before any compilation, so that a name it
cannot map is a ``ConfigError`` listing what that backend supports.

The config is a dict::

    {"name": "adamw", "lr": 3e-4, "clip_norm": 1.0, "weight_decay": 0.01, "b2": 0.98}

``name``
    One of :data:`OPTIMIZER_NAMES`, the vocabulary shared by every backend (the
    names follow optax; a backend may support a subset).
``lr`` (alias ``learning_rate``; give one, not both)
    A positive number, or a schedule dict ``{"schedule": NAME, ...}`` with NAME in
    :data:`SCHEDULES` (see there for each schedule's fields). A numeric string
    such as ``"1e-3"`` is accepted, because YAML 1.1 reads ``1e-3`` (no dot) as a
    string.
``clip_norm`` (optional)
    A positive number: gradients are clipped to this global norm
    (``optax.clip_by_global_norm``) before anything else.
``weight_decay`` (optional)
    A non-negative number. Optimisers that define weight decay themselves
    (:data:`DECOUPLED_WEIGHT_DECAY`: adamw, nadamw, adamaxw, lion, lamb, lars,
    novograd, adan, adadelta, adafactor) receive it directly, i.e. *decoupled*
    weight decay as those optimisers define it. For every other optimiser it is
    classic L2 regularisation (``weight_decay * params`` added to the gradient
    ahead of the optimiser), the meaning ``weight_decay`` has in
    ``torch.optim.Adam`` and ``torch.optim.SGD``; pick ``adamw`` (or ``nadamw``,
    ``adamaxw``) for decoupled decay with Adam.
any other key
    Passed to the backend's optimiser as a keyword argument (``b1``, ``momentum``,
    ``nesterov``, …). These are checked by the backend when it maps the spec
    (e.g. against the optax function's signature), not here.

Errors are :class:`~pipekit_train.errors.ConfigError` whose ``field`` is the
dotted path of the offending entry (``optimizer_config.lr.decay_steps``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, NoReturn

from pipekit_train.errors import ConfigError, closest

__all__ = [
    "OPTIMIZER_NAMES",
    "DECOUPLED_WEIGHT_DECAY",
    "SCHEDULES",
    "RESERVED_KEYS",
    "ScheduleSpec",
    "OptimizerSpec",
    "parse_optimizer_config",
    "validate_optimizer_config",
    "require_supported",
    "schedule_length_from_max_steps",
    "is_transformation",
    "refuse_transformation",
]

ROOT = "optimizer_config"

#: The neutral vocabulary of ``optimizer_config["name"]``. The names follow optax
#: (the JAX backends support all of them); other backends support a subset and say
#: which through :func:`require_supported`.
OPTIMIZER_NAMES: tuple[str, ...] = (
    "adam",
    "adamw",
    "sgd",
    "rmsprop",
    "lion",
    "adafactor",
    "nadam",
    "nadamw",
    "adagrad",
    "adabelief",
    "adadelta",
    "adamax",
    "adamaxw",
    "adan",
    "amsgrad",
    "fromage",
    "lamb",
    "lars",
    "novograd",
    "radam",
    "sm3",
    "yogi",
)

#: Optimisers that define (decoupled) weight decay themselves: name → the keyword
#: that receives ``optimizer_config["weight_decay"]`` in the optax function.
DECOUPLED_WEIGHT_DECAY: dict[str, str] = {
    "adamw": "weight_decay",
    "nadamw": "weight_decay",
    "adamaxw": "weight_decay",
    "lion": "weight_decay",
    "lamb": "weight_decay",
    "lars": "weight_decay",
    "novograd": "weight_decay",
    "adan": "weight_decay",
    "adadelta": "weight_decay",
    "adafactor": "weight_decay_rate",
}

#: Keys of ``optimizer_config`` that pipekit interprets itself; all others are
#: optimiser keyword arguments.
RESERVED_KEYS: frozenset[str] = frozenset(
    {"name", "lr", "learning_rate", "clip_norm", "weight_decay"}
)

# Kinds of schedule field. Each maps to a checker below.
_VALUE = "a finite number >= 0"
_POSITIVE = "a finite number > 0"
_STEPS = "an integer > 0"
_NONNEG_STEPS = "an integer >= 0"
_BOOL = "true or false"
_BOUNDARIES = "a mapping {step (integer >= 0): scale (number >= 0)}"


@dataclass(frozen=True)
class ScheduleSpec:
    """What one ``lr`` schedule accepts.

    ``required`` and ``optional`` map field names to their kind;
    ``max_steps_default`` names the required field that, when omitted, is filled
    from ``TrainingLoop.max_steps``. Each backend maps the schedule name onto its
    own library (``pipekit_train.jax.optim.OPTAX_SCHEDULES`` for optax).
    """

    required: dict[str, str]
    optional: dict[str, str] = field(default_factory=dict)
    max_steps_default: str | None = None
    doc: str = ""


#: The learning-rate schedules. Field names follow optax.
#:
#: ``decay_steps`` of ``cosine_decay`` and ``warmup_cosine_decay`` and
#: ``transition_steps`` of ``linear`` default to ``max_steps`` (decay over the
#: whole run); ``exponential_decay``'s ``transition_steps`` is a period, not a
#: run length, so it has no default. For ``warmup_cosine_decay``, ``decay_steps``
#: is the total length including the warm-up, as in optax.
SCHEDULES: dict[str, ScheduleSpec] = {
    "constant": ScheduleSpec(
        required={"value": _VALUE},
        doc="lr = value at every step",
    ),
    "cosine_decay": ScheduleSpec(
        required={"init_value": _VALUE, "decay_steps": _STEPS},
        optional={"alpha": _VALUE, "exponent": _POSITIVE},
        max_steps_default="decay_steps",
        doc="cosine from init_value down to alpha * init_value over decay_steps",
    ),
    "warmup_cosine_decay": ScheduleSpec(
        required={
            "init_value": _VALUE,
            "peak_value": _POSITIVE,
            "warmup_steps": _NONNEG_STEPS,
            "decay_steps": _STEPS,
        },
        optional={"end_value": _VALUE, "exponent": _POSITIVE},
        max_steps_default="decay_steps",
        doc="linear warm-up init_value → peak_value over warmup_steps, then cosine "
        "to end_value; decay_steps is the total length, warm-up included",
    ),
    "exponential_decay": ScheduleSpec(
        required={"init_value": _VALUE, "transition_steps": _STEPS, "decay_rate": _POSITIVE},
        optional={"transition_begin": _NONNEG_STEPS, "staircase": _BOOL, "end_value": _VALUE},
        doc="init_value * decay_rate ** ((step - transition_begin) / transition_steps)",
    ),
    "linear": ScheduleSpec(
        required={"init_value": _VALUE, "end_value": _VALUE, "transition_steps": _STEPS},
        optional={"transition_begin": _NONNEG_STEPS},
        max_steps_default="transition_steps",
        doc="linear from init_value to end_value over transition_steps",
    ),
    "piecewise_constant": ScheduleSpec(
        required={"init_value": _VALUE, "boundaries_and_scales": _BOUNDARIES},
        doc="init_value, multiplied by scale once step reaches each boundary",
    ),
}


@dataclass(frozen=True)
class OptimizerSpec:
    """A validated, normalised ``optimizer_config``.

    ``lr`` is a float or a dict ``{"schedule": NAME, **fields}`` whose fields are
    converted to their proper types (and a ``max_steps`` default filled in when
    ``max_steps`` was known). ``kwargs`` are the pass-through optimiser keyword
    arguments, not yet checked against optax. ``lr_fn`` is the user's own schedule
    callable (an optax schedule, ``step -> rate``; Python only, JAX backends), kept
    as given; ``lr`` is then its :func:`schedule_identity`.
    """

    name: str
    lr: float | dict[str, Any]
    clip_norm: float | None
    weight_decay: float | None
    kwargs: dict[str, Any]
    lr_fn: Callable[[Any], Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The normalised spec as plain data (numbers as numbers), e.g. for the resume guard."""
        lr: Any = self.lr
        if isinstance(lr, dict) and self.lr_fn is None:
            lr = {
                k: ({str(b): s for b, s in v.items()} if isinstance(v, dict) else v)
                for k, v in lr.items()
            }
        return {
            "name": self.name,
            "lr": lr,
            "clip_norm": self.clip_norm,
            "weight_decay": self.weight_decay,
            "kwargs": dict(sorted(self.kwargs.items())),
        }


# --------------------------------------------------------------------------- checks


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _as_real(value: Any, where: str, *, positive: bool, what: str = "") -> float:
    """A finite real number (a numeric string is accepted: YAML reads ``1e-3`` as str)."""
    bound = "> 0" if positive else ">= 0"
    num: float | None = None
    if _is_number(value):
        num = float(value)
    elif isinstance(value, str):
        try:
            num = float(value.strip())
        except ValueError:
            num = None
    if num is None or not math.isfinite(num) or (num <= 0 if positive else num < 0):
        raise ConfigError(
            f"{where} must be a finite number {bound}{what}, got {value!r}", field=where
        )
    return num


def _as_int(value: Any, where: str, *, minimum: int) -> int:
    num: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        num = value
    elif isinstance(value, float) and value.is_integer():
        num = int(value)
    if num is None or num < minimum:
        raise ConfigError(f"{where} must be an integer >= {minimum}, got {value!r}", field=where)
    return num


def _check_boundaries(value: Any, where: str) -> dict[int, float]:
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(
            f"{where} must be a non-empty mapping {{step: scale}}, e.g. "
            f"{{1000: 0.1, 2000: 0.1}}; got {value!r}",
            field=where,
        )
    out: dict[int, float] = {}
    for step, scale in value.items():
        key: int | None = None
        if isinstance(step, int) and not isinstance(step, bool):
            key = step
        elif isinstance(step, str) and step.strip().isdigit():  # JSON / quoted YAML keys
            key = int(step.strip())
        if key is None or key < 0:
            raise ConfigError(
                f"{where} keys must be step numbers (integers >= 0), got {step!r}",
                field=where,
            )
        out[key] = _as_real(scale, f"{where}[{key}]", positive=False, what=" (a scale)")
    return out


def _check_field(kind: str, value: Any, where: str) -> Any:
    if kind == _VALUE:
        return _as_real(value, where, positive=False)
    if kind == _POSITIVE:
        return _as_real(value, where, positive=True)
    if kind == _STEPS:
        return _as_int(value, where, minimum=1)
    if kind == _NONNEG_STEPS:
        return _as_int(value, where, minimum=0)
    if kind == _BOOL:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}", field=where)
        return value
    if kind == _BOUNDARIES:
        return _check_boundaries(value, where)
    raise AssertionError(kind)  # pragma: no cover


def _describe(spec: ScheduleSpec) -> str:
    req = ", ".join(spec.required)
    opt = ", ".join(spec.optional) or "none"
    text = f"required: {req}; optional: {opt}"
    if spec.max_steps_default:
        text += f" ({spec.max_steps_default} defaults to max_steps)"
    return text


def _parse_schedule(lr: Mapping[str, Any], where: str, max_steps: int | None) -> dict[str, Any]:
    for key in lr:
        if not isinstance(key, str):
            raise ConfigError(f"{where} keys must be strings, got {key!r}", field=where)
    if "schedule" not in lr:
        raise ConfigError(
            f"{where}.schedule is missing: {where} is a dict but has no 'schedule' key; write "
            f"{{'schedule': NAME, ...}} with NAME one of {', '.join(SCHEDULES)}, "
            f"or give a positive number",
            field=f"{where}.schedule",
        )
    name = lr["schedule"]
    if not isinstance(name, str) or name not in SCHEDULES:
        hint = closest(name, SCHEDULES) if isinstance(name, str) else ""
        raise ConfigError(
            f"{where}.schedule: unknown schedule {name!r}{hint}; "
            f"valid schedules: {', '.join(SCHEDULES)}",
            field=f"{where}.schedule",
        )
    spec = SCHEDULES[name]
    allowed = {**spec.required, **spec.optional}
    for key in lr:
        if key != "schedule" and key not in allowed:
            raise ConfigError(
                f"{where}.{key}: schedule {name!r} has no field {key!r}"
                f"{closest(key, allowed)}; {_describe(spec)}",
                field=f"{where}.{key}",
            )
    out: dict[str, Any] = {"schedule": name}
    for key, kind in spec.required.items():
        if key not in lr:
            if key == spec.max_steps_default:
                if max_steps is not None:
                    out[key] = max_steps
                continue  # filled from max_steps at resolve time
            raise ConfigError(
                f"{where}.{key} is missing: schedule {name!r} needs it; {_describe(spec)}",
                field=f"{where}.{key}",
            )
        out[key] = _check_field(kind, lr[key], f"{where}.{key}")
    for key, kind in spec.optional.items():
        if key in lr:
            out[key] = _check_field(kind, lr[key], f"{where}.{key}")
    if name == "warmup_cosine_decay" and "decay_steps" in out:
        if out["warmup_steps"] >= out["decay_steps"]:
            source = "" if "decay_steps" in lr else " (taken from max_steps)"
            raise ConfigError(
                f"{where}.warmup_steps ({out['warmup_steps']}) must be smaller than "
                f"decay_steps ({out['decay_steps']}{source}), which is the schedule's "
                f"total length including the warm-up",
                field=f"{where}.warmup_steps",
            )
    return out


def parse_optimizer_config(
    config: Mapping[str, Any], *, max_steps: int | None = None
) -> OptimizerSpec:
    """Validate ``config`` and return it normalised (see the module docstring).

    ``max_steps`` (when known) fills the schedule fields that default to it; when
    it is ``None`` those fields may be omitted and are filled at resolve time.
    """
    if is_transformation(config):
        refuse_transformation(config, backend=None)
    if not isinstance(config, Mapping):
        raise ConfigError(
            f"{ROOT} must be a dict such as {{'name': 'adam', 'lr': 1e-3}}, "
            f"got {type(config).__name__}",
            field=ROOT,
        )
    for key in config:
        if not isinstance(key, str):
            raise ConfigError(f"{ROOT} keys must be strings, got {key!r}", field=ROOT)
    if max_steps is not None:
        _as_int(max_steps, "max_steps", minimum=1)

    name = config.get("name")
    if name is None:
        raise ConfigError(
            f"{ROOT}.name is missing; valid optimisers: {', '.join(OPTIMIZER_NAMES)}",
            field=f"{ROOT}.name",
        )
    if not isinstance(name, str) or name not in OPTIMIZER_NAMES:
        hint = closest(name, OPTIMIZER_NAMES) if isinstance(name, str) else ""
        raise ConfigError(
            f"{ROOT}.name: unknown optimiser {name!r}{hint}; "
            f"valid optimisers: {', '.join(OPTIMIZER_NAMES)}",
            field=f"{ROOT}.name",
        )

    if "lr" in config and "learning_rate" in config:
        raise ConfigError(
            f"{ROOT}.learning_rate: {ROOT} gives both 'lr' and 'learning_rate'; they are "
            f"the same setting, keep one",
            field=f"{ROOT}.learning_rate",
        )
    lr_key = "lr" if "lr" in config else "learning_rate"
    where = f"{ROOT}.{lr_key}"
    if lr_key not in config:
        raise ConfigError(
            f"{ROOT}.lr is missing: give a positive number (e.g. 1e-3) or a schedule "
            f"dict {{'schedule': NAME, ...}} with NAME one of {', '.join(SCHEDULES)}",
            field=f"{ROOT}.lr",
        )
    raw_lr = config[lr_key]
    lr: float | dict[str, Any]
    lr_fn = None
    if isinstance(raw_lr, Mapping):
        lr = _parse_schedule(raw_lr, where, max_steps)
    elif callable(raw_lr):
        lr_fn, lr = raw_lr, schedule_identity(raw_lr)  # the user's own schedule (Python only)
    else:
        lr = _as_real(
            raw_lr, where, positive=True, what=" or a schedule dict {'schedule': NAME, ...}"
        )

    clip_norm = None
    if config.get("clip_norm") is not None:
        clip_norm = _as_real(config["clip_norm"], f"{ROOT}.clip_norm", positive=True)
    weight_decay = None
    if config.get("weight_decay") is not None:
        weight_decay = _as_real(config["weight_decay"], f"{ROOT}.weight_decay", positive=False)

    kwargs = {k: v for k, v in config.items() if k not in RESERVED_KEYS}
    native = DECOUPLED_WEIGHT_DECAY.get(name)
    if weight_decay is not None and native is not None and native != "weight_decay":
        if native in kwargs:
            raise ConfigError(
                f"{ROOT}.{native}: {ROOT} gives both 'weight_decay' and {native!r}; for "
                f"{name!r} they are the same setting, keep one",
                field=f"{ROOT}.{native}",
            )
    return OptimizerSpec(
        name=name,
        lr=lr,
        clip_norm=clip_norm,
        weight_decay=weight_decay,
        kwargs=kwargs,
        lr_fn=lr_fn,
    )


def validate_optimizer_config(config: Mapping[str, Any], *, max_steps: int | None = None) -> None:
    """Raise :class:`ConfigError` naming the field if ``config`` is malformed.

    Pure Python (no jax, no optax): safe to call from ``TrainingLoop``
    construction in a JAX-free install. Optimiser keyword arguments beyond the
    keys pipekit interprets are only checked when the optimiser is resolved.
    """
    parse_optimizer_config(config, max_steps=max_steps)


def schedule_length_from_max_steps(config: Mapping[str, Any]) -> str | None:
    """The dotted field of ``config``'s schedule that defaults to ``max_steps``, if it is unset.

    ``None`` when the learning rate does not depend on ``max_steps`` (a constant
    rate, a schedule without such a field, or one whose length is given). The
    resume guard uses it: changing ``max_steps`` changes such a schedule, while
    under any other config a longer ``max_steps`` just trains longer.
    """
    lr_key = "lr" if "lr" in config else "learning_rate"
    lr = config.get(lr_key)
    if not isinstance(lr, Mapping):
        return None
    spec = SCHEDULES.get(lr.get("schedule"))  # type: ignore[arg-type]
    if spec is None or spec.max_steps_default is None or spec.max_steps_default in lr:
        return None
    return f"{ROOT}.{lr_key}.{spec.max_steps_default}"


def require_supported(
    spec: OptimizerSpec, supported: Collection[str], *, backend: str, callable_lr: bool = False
) -> None:
    """Raise ``ConfigError`` if ``backend`` cannot map ``spec.name`` or its schedule.

    Backends call this at ``run()`` before compiling anything; ``supported`` is
    the set of vocabulary names the backend maps onto its library. A callable
    ``lr`` (the user's own optax schedule) is refused unless ``callable_lr``.
    """
    if spec.lr_fn is not None and not callable_lr:
        raise ConfigError(
            f"{ROOT}.lr is a Python callable (an optax schedule); the {backend} backend "
            f"cannot use one: give a number or a schedule dict {{'schedule': NAME, ...}} "
            f"(NAME one of {', '.join(SCHEDULES)})",
            field=f"{ROOT}.lr",
        )
    if spec.name not in supported:
        raise ConfigError(
            f"{ROOT}.name: the {backend} backend has no optimiser {spec.name!r}"
            f"{closest(spec.name, sorted(supported))}; it supports: "
            f"{', '.join(sorted(supported))}",
            field=f"{ROOT}.name",
        )


# --------------------------------------------------------------------------- own objects

#: The steps at which a user's own schedule callable is sampled for the resume guard.
#: Fixed (not derived from ``max_steps``), so a longer run keeps the same identity.
SCHEDULE_PROBE_STEPS: tuple[int, ...] = (
    0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 100_000,
)  # fmt: skip


def is_transformation(obj: Any) -> bool:
    """Whether ``obj`` looks like an ``optax.GradientTransformation`` (pure Python check).

    Duck-typed (callable ``init`` and ``update``, not a dict) so that core need not
    import optax: ``TrainingLoop`` accepts such an object as ``optimizer_config``.
    """
    return (
        not isinstance(obj, Mapping)
        and callable(getattr(obj, "init", None))
        and callable(getattr(obj, "update", None))
    )


def refuse_transformation(obj: Any, *, backend: str | None) -> NoReturn:
    """Raise ``ConfigError``: ``optimizer_config`` is an optax object where one cannot be used."""
    where = f"the {backend} backend" if backend else "this backend"
    raise ConfigError(
        f"{ROOT} is an optax.GradientTransformation ({type(obj).__name__}); only the "
        f"equinox and numpyro-svi backends train with the user's own optax object, "
        f"{where} needs a dict such as {{'name': 'adam', 'lr': 1e-3}}",
        field=ROOT,
    )


def schedule_identity(fn: Callable[[Any], Any]) -> dict[str, Any]:
    """The resume-guard form of a user's schedule: its values at :data:`SCHEDULE_PROBE_STEPS`.

    A function has no stable value of its own (its repr holds a memory address), so the
    guard records what it computes: two schedules that agree at every probe step are
    treated as the same. A schedule that cannot be called with a step number gives
    ``{"schedule": "callable", "values": None}``, which the guard cannot vouch for.
    """
    values: dict[str, Any] | None = {}
    try:
        for step in SCHEDULE_PROBE_STEPS:
            assert values is not None
            values[str(step)] = f"{float(fn(step)):.6g}"
    except Exception:  # noqa: BLE001 - an uncallable schedule is reported by the guard
        values = None
    return {"schedule": "callable", "values": values}
