"""The search space: dotted paths into a loop config, each with one distribution.

A path starts with a ``TrainingLoop`` field (``optimizer_config.lr``,
``backend_options.steps_per_call``, ``model_op.kwargs.hidden``, ``seed``). A distribution
is ``{type: float, low, high, log}``, ``{type: int, low, high, step, log}`` or
``{type: categorical, choices: [...]}``. Pure Python: Optuna is imported only to suggest.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, closest

__all__ = ["Param", "parse_space", "set_path", "apply_params"]

_TYPES = ("float", "int", "categorical")


@dataclass(frozen=True)
class Param:
    """One dimension of the space: ``path`` and its distribution."""

    path: str
    type: str
    low: float | int | None = None
    high: float | int | None = None
    step: int | None = None
    log: bool = False
    choices: tuple[Any, ...] = ()

    def suggest(self, trial: Any) -> Any:
        """The value ``trial`` (an ``optuna.Trial``) suggests for this dimension."""
        if self.type == "float":
            return trial.suggest_float(self.path, self.low, self.high, log=self.log)
        if self.type == "int":
            return trial.suggest_int(
                self.path, self.low, self.high, step=self.step or 1, log=self.log
            )
        return trial.suggest_categorical(self.path, list(self.choices))

    def sample_value(self) -> Any:
        """A value inside the space (its low end), to check the config it makes."""
        return self.choices[0] if self.type == "categorical" else self.low


def _number(value: Any, name: str, *, integer: bool) -> Any:
    ok = isinstance(value, int) if integer else isinstance(value, (int, float))
    if isinstance(value, bool) or not ok or not math.isfinite(value):
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"sweep space {name} must be {kind}, got {value!r}", field=name)
    return value


def _param(path: str, spec: Any) -> Param:
    where = f"space.{path}"
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{where} must be a mapping such as {{type: float, low: 1e-4, high: 1e-2, log: "
            f"true}}, got {spec!r}",
            field=where,
        )
    kind = spec.get("type")
    if kind not in _TYPES:
        raise ConfigError(
            f"{where}.type must be one of {', '.join(_TYPES)}, got {kind!r}"
            + closest(str(kind), _TYPES),
            field=f"{where}.type",
        )
    allowed = {"float": {"low", "high", "log"}, "int": {"low", "high", "step", "log"}}.get(
        kind, {"choices"}
    ) | {"type"}
    for key in spec:
        if key not in allowed:
            raise ConfigError(
                f"{where}: unknown key {key!r} for a {kind} distribution; it takes "
                f"{', '.join(sorted(allowed))}",
                field=f"{where}.{key}",
            )
    if kind == "categorical":
        choices = spec.get("choices")
        if not isinstance(choices, list) or not choices:
            raise ConfigError(
                f"{where}.choices must be a non-empty list, got {choices!r}",
                field=f"{where}.choices",
            )
        for c in choices:
            if c is not None and not isinstance(c, (bool, int, float, str)):
                raise ConfigError(
                    f"{where}.choices holds {c!r}; choices must be numbers, strings, booleans "
                    "or null",
                    field=f"{where}.choices",
                )
        return Param(path, kind, choices=tuple(choices))
    integer = kind == "int"
    for key in ("low", "high"):
        if key not in spec:
            raise ConfigError(
                f"{where}.{key} is required for a {kind} distribution", field=f"{where}.{key}"
            )
    low = _number(spec["low"], f"{where}.low", integer=integer)
    high = _number(spec["high"], f"{where}.high", integer=integer)
    if low > high:
        raise ConfigError(f"{where}: low ({low}) is above high ({high})", field=f"{where}.low")
    log = spec.get("log", False)
    if not isinstance(log, bool):
        raise ConfigError(f"{where}.log must be true or false, got {log!r}", field=f"{where}.log")
    if log and low <= 0:
        raise ConfigError(
            f"{where}: a log distribution needs low > 0, got {low}", field=f"{where}.low"
        )
    step = spec.get("step")
    if step is not None:
        step = _number(step, f"{where}.step", integer=True)
        if step <= 0 or log:
            raise ConfigError(
                f"{where}.step must be a positive integer and cannot go with log: true",
                field=f"{where}.step",
            )
    return Param(
        path,
        kind,
        low=float(low) if not integer else low,
        high=float(high) if not integer else high,
        step=step,
        log=log,
    )


def parse_space(space: Any, field_names: list[str]) -> tuple[Param, ...]:
    """``{path: distribution}`` → ``Param``s; ``ConfigError`` naming a bad path or distribution."""
    if isinstance(space, (list, tuple)) and all(isinstance(p, Param) for p in space):
        params = tuple(space)
    else:
        if not isinstance(space, Mapping) or not space:
            raise ConfigError(
                "sweep space must be a non-empty mapping of dotted field paths to "
                "distributions, such as {'optimizer_config.lr': {'type': 'float', 'low': "
                "1e-4, 'high': 1e-2, 'log': True}}",
                field="space",
            )
        params = tuple(_param(str(path), spec) for path, spec in space.items())
    for p in params:
        head = p.path.split(".")[0]
        if head not in field_names or "" in p.path.split("."):
            raise ConfigError(
                f"space.{p.path}: {head!r} is not a TrainingLoop field"
                + closest(head, field_names)
                + "; a path starts with a field, such as optimizer_config.lr, "
                "backend_options.steps_per_call, model_op.kwargs.hidden or seed",
                field=f"space.{p.path}",
            )
    return params


def set_path(data: dict[str, Any], path: str, value: Any, default: Any = None) -> None:
    """Set ``data[a][b]…= value`` for ``path`` ``"a.b…"`` (in place; mappings copied on the way).

    A path through a value that is not a mapping is a ``ConfigError`` naming the path;
    ``default`` starts a top-level field the config leaves out (its ``TrainingLoop`` default).
    """
    parts = path.split(".")
    if len(parts) > 1 and data.get(parts[0]) is None:
        data[parts[0]] = default if default is not None else {}
    target = data
    for i, part in enumerate(parts[:-1]):
        nxt = target.get(part)
        if nxt is None:
            nxt = {}
        if isinstance(nxt, str) and i == 0 and ":" in nxt:
            nxt = {"factory": nxt}  # 'module:factory' → {factory: …, kwargs: {…}}
        if not isinstance(nxt, Mapping):
            raise ConfigError(
                f"space.{path}: {'.'.join(parts[: i + 1])} is {nxt!r}, not a mapping, so "
                f"{parts[i + 1]!r} cannot be set inside it",
                field=f"space.{path}",
            )
        target[part] = dict(nxt)
        target = target[part]
    target[parts[-1]] = value


def apply_params(base: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of the loop config ``base`` with each dotted ``path: value`` set."""
    from ..config import _field_default

    data = copy.deepcopy(dict(base))
    for path, value in params.items():
        set_path(data, path, value, _field_default(path.split(".")[0]))
    return data
