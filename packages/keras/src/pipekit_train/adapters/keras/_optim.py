"""``optimizer_config`` → a Keras optimiser, schedules → ``keras.optimizers.schedules``.

The names and the validation are core's (``pipekit_train.optimizers``); this module
maps them onto Keras. Optax-style keyword names (``b1``, ``b2``, ``eps``, ``decay``)
become Keras' (``beta_1``, ``beta_2``, ``epsilon``, ``rho``); any other keyword must
be one the Keras optimiser takes. What Keras cannot express (an optimiser it does not
have, a schedule option it lacks, L2 ``weight_decay`` on a non-decoupled optimiser)
is a ``ConfigError`` naming the field, raised before anything is compiled.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Mapping
from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.optimizers import (
    DECOUPLED_WEIGHT_DECAY,
    OptimizerSpec,
    parse_optimizer_config,
    require_supported,
)

__all__ = [
    "KERAS_OPTIMIZERS",
    "per_update_schedule_class",
    "resolve_keras_optimizer",
    "resolve_keras_schedule",
]

ROOT = "optimizer_config"

#: pipekit name → (Keras class name, fixed extra kwargs).
KERAS_OPTIMIZERS: dict[str, tuple[str, dict[str, Any]]] = {
    "adam": ("Adam", {}),
    "adamw": ("AdamW", {}),
    "amsgrad": ("Adam", {"amsgrad": True}),
    "sgd": ("SGD", {}),
    "rmsprop": ("RMSprop", {}),
    "lion": ("Lion", {}),
    "adafactor": ("Adafactor", {}),
    "nadam": ("Nadam", {}),
    "adagrad": ("Adagrad", {}),
    "adadelta": ("Adadelta", {}),
    "adamax": ("Adamax", {}),
    "lamb": ("Lamb", {}),
}

#: Optax's default decoupled weight decay of the optimisers that have one, used when
#: ``weight_decay`` is not given (Keras' own defaults differ, e.g. AdamW's 0.004).
_DECOUPLED_DEFAULTS: dict[str, float | None] = {
    "adamw": 1e-4,
    "lion": 1e-3,
    "lamb": 0.0,
    "adadelta": 0.0,
    "adafactor": None,
}

_RENAMES = {"b1": "beta_1", "b2": "beta_2", "eps": "epsilon", "decay": "rho"}


def _schedules(keras: Any) -> Any:
    return keras.optimizers.schedules


def resolve_keras_schedule(keras: Any, lr: float | Mapping[str, Any], max_steps: int) -> Any:
    """A float, or the ``keras.optimizers.schedules`` object for a validated schedule dict."""
    if not isinstance(lr, Mapping):
        return float(lr)
    where = f"{ROOT}.lr"
    s = _schedules(keras)
    name = lr["schedule"]

    def unsupported(key: str, why: str) -> ConfigError:
        return ConfigError(
            f"{where}.{key}: {why} has no equivalent in keras.optimizers.schedules; drop it "
            "or use the equinox backend",
            field=f"{where}.{key}",
        )

    if name == "constant":
        return float(lr["value"])
    if name in ("cosine_decay", "warmup_cosine_decay") and lr.get("exponent", 1.0) != 1.0:
        raise unsupported("exponent", f"{name}'s exponent")
    if name == "cosine_decay":
        return s.CosineDecay(
            initial_learning_rate=lr["init_value"],
            decay_steps=lr.get("decay_steps", max_steps),
            alpha=lr.get("alpha", 0.0),
        )
    if name == "warmup_cosine_decay":
        total = lr.get("decay_steps", max_steps)
        peak = lr["peak_value"]
        return s.CosineDecay(
            initial_learning_rate=lr["init_value"],
            decay_steps=total - lr["warmup_steps"],  # Keras counts the decay after warm-up
            alpha=lr.get("end_value", 0.0) / peak,
            warmup_target=peak,
            warmup_steps=lr["warmup_steps"],
        )
    if name == "exponential_decay":
        if lr.get("transition_begin", 0):
            raise unsupported("transition_begin", "exponential_decay's transition_begin")
        if lr.get("end_value") is not None:
            raise unsupported("end_value", "exponential_decay's end_value")
        return s.ExponentialDecay(
            initial_learning_rate=lr["init_value"],
            decay_steps=lr["transition_steps"],
            decay_rate=lr["decay_rate"],
            staircase=lr.get("staircase", False),
        )
    if name == "linear":
        if lr.get("transition_begin", 0):
            raise unsupported("transition_begin", "linear's transition_begin")
        return s.PolynomialDecay(
            initial_learning_rate=lr["init_value"],
            decay_steps=lr.get("transition_steps", max_steps),
            end_learning_rate=lr["end_value"],
            power=1.0,
        )
    if name == "piecewise_constant":
        value = float(lr["init_value"])
        boundaries, values = [], [value]
        for step, scale in sorted(lr["boundaries_and_scales"].items()):
            value *= scale
            # optax scales once count >= boundary; Keras once step > boundary.
            boundaries.append(int(step) - 1)
            values.append(value)
        if boundaries and boundaries[0] < 0:
            raise ConfigError(
                f"{where}.boundaries_and_scales: a boundary at step 0 cannot be expressed in "
                "Keras' PiecewiseConstantDecay; fold its scale into init_value",
                field=f"{where}.boundaries_and_scales",
            )
        return s.PiecewiseConstantDecay(boundaries, values)
    raise AssertionError(name)  # pragma: no cover - core validated the name


@functools.cache
def per_update_schedule_class(keras: Any) -> Any:
    """``PerUpdateSchedule(schedule, k)``: ``schedule(micro_batch // k)``, registered with Keras.

    Keras evaluates a schedule at its micro-batch counter under
    ``gradient_accumulation_steps``; the loop's schedules count optimiser updates, so
    update ``n`` (micro-batch ``n * k - 1``) must use ``schedule(n - 1)``, as without
    accumulation. Registered serialisable so a saved op's optimiser config loads.
    """

    @keras.saving.register_keras_serializable(package="pipekit_train")
    class PerUpdateSchedule(keras.optimizers.schedules.LearningRateSchedule):
        def __init__(self, schedule: Any, accumulate_steps: int) -> None:
            self.schedule = schedule
            self.accumulate_steps = int(accumulate_steps)

        def __call__(self, step: Any) -> Any:
            return self.schedule(keras.ops.floor_divide(step, self.accumulate_steps))

        def get_config(self) -> dict[str, Any]:
            return {
                "schedule": keras.optimizers.schedules.serialize(self.schedule),
                "accumulate_steps": self.accumulate_steps,
            }

        @classmethod
        def from_config(cls, config: dict[str, Any]) -> Any:
            inner = keras.optimizers.schedules.deserialize(config["schedule"])
            return cls(inner, config["accumulate_steps"])

    return PerUpdateSchedule


def resolve_keras_optimizer(
    keras: Any,
    config: Mapping[str, Any],
    max_steps: int,
    *,
    accumulate_steps: int = 1,
    ema_decay: float | None = None,
) -> Any:
    """A fresh Keras optimiser for ``config`` (validated by core first).

    ``accumulate_steps > 1`` sets ``gradient_accumulation_steps`` (with the schedule
    counting updates); ``ema_decay`` sets ``use_ema`` / ``ema_momentum`` (the update
    rule is the loop's, see ``_features.install_ema``).
    """
    spec: OptimizerSpec = parse_optimizer_config(config, max_steps=max_steps)
    require_supported(spec, KERAS_OPTIMIZERS, backend="keras")
    cls_name, fixed = KERAS_OPTIMIZERS[spec.name]
    cls = getattr(keras.optimizers, cls_name)
    params = inspect.signature(cls.__init__).parameters
    kwargs: dict[str, Any] = dict(fixed)
    for key, value in spec.kwargs.items():
        target = _RENAMES.get(key, key)
        if target not in params or target in ("self", "learning_rate", "name", "kwargs"):
            valid = sorted(
                p for p in params if p not in ("self", "learning_rate", "name", "kwargs")
            )
            raise ConfigError(
                f"{ROOT}.{key}: keras.optimizers.{cls_name} takes no {target!r}; its options "
                f"are {', '.join(valid)} (optax names b1, b2, eps, decay are translated)",
                field=f"{ROOT}.{key}",
            )
        kwargs[target] = value
    if spec.weight_decay is not None:
        if spec.name not in DECOUPLED_WEIGHT_DECAY:  # L2 in the vocabulary: Keras has none
            raise ConfigError(
                f"{ROOT}.weight_decay: with {spec.name!r} pipekit's weight_decay is L2 added to "
                "the gradient, which Keras optimisers do not offer (their weight_decay is "
                "decoupled); use name 'adamw' (decoupled decay) or drop weight_decay",
                field=f"{ROOT}.weight_decay",
            )
        kwargs["weight_decay"] = spec.weight_decay
    elif _DECOUPLED_DEFAULTS.get(spec.name) is not None:
        kwargs.setdefault("weight_decay", _DECOUPLED_DEFAULTS[spec.name])
    if spec.clip_norm is not None:
        kwargs["global_clipnorm"] = spec.clip_norm
    lr = resolve_keras_schedule(keras, spec.lr, max_steps)
    if accumulate_steps > 1:
        kwargs["gradient_accumulation_steps"] = int(accumulate_steps)
        if not isinstance(lr, float):
            lr = per_update_schedule_class(keras)(lr, accumulate_steps)
    if ema_decay is not None:
        kwargs.update(use_ema=True, ema_momentum=float(ema_decay), ema_overwrite_frequency=None)
    try:
        return cls(learning_rate=lr, **kwargs)
    except (TypeError, ValueError) as exc:
        raise ConfigError(
            f"{ROOT}: keras.optimizers.{cls_name} rejected {kwargs}: {exc}", field=ROOT
        ) from exc


def make_rate_of_steps(keras: Any, config: Mapping[str, Any], max_steps: int) -> Any:
    """``rates(steps)`` → the learning rate each (1-based) step's update used.

    Reported as the ``lr`` metric, as the JAX backends do: Keras purges its
    variables during ``fit``, so ``optimizer.learning_rate`` cannot be read there.
    Schedules are evaluated on the host side in one vectorised call per host event.
    """
    spec = parse_optimizer_config(config, max_steps=max_steps)
    return rates_of(resolve_keras_schedule(keras, spec.lr, max_steps))


def rates_of(schedule: Any) -> Any:
    """``rates(steps)`` of a constant rate (a float) or a schedule of the step, the schedule
    evaluated on the host in one vectorised, compiled call per host event."""
    if isinstance(schedule, float):
        value = schedule
        return lambda steps: [value] * len(steps)
    import jax
    import numpy as np

    batched = jax.jit(jax.vmap(schedule))

    def rates(steps: list[int]) -> list[float]:
        if not steps:
            return []
        out = batched(np.asarray(steps, dtype=np.int32) - 1)
        return [float(v) for v in np.asarray(out)]

    return rates
