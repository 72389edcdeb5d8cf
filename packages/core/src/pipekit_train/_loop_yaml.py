"""YAML ⇄ a loop's fields: the conversion behind ``TrainingLoop.to_yaml`` / ``from_yaml``.

Below ``pipekit_train.loop`` (which calls it): the loop class is passed in (``cls``), never
imported, so the dependency points one way. ``pipekit_train.config`` is the public face.

Only ``yaml.safe_load`` / ``yaml.safe_dump`` are used, imported when called (PyYAML is
~9 ms of a run's imports that never reads or writes YAML). Objects (model, datasets,
task, custom callbacks, a custom loss) appear in YAML as ``'module:attr'``
import strings of factories, or ``{factory: 'module:attr', kwargs: {…}}``.
Relative imports resolve against the YAML file's folder and the working
directory. Built-in callbacks are written ``{EarlyStopping: {patience: 3}}``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import MISSING, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._refs import FactoryRef
from .callbacks import BUILTIN_CALLBACKS, Callback
from .errors import ConfigError, closest

if TYPE_CHECKING:
    from .protocols import LoopView

__all__ = [
    "apply_overrides",
    "field_default",
    "field_names",
    "from_dict",
    "from_yaml",
    "read_source",
    "to_dict",
    "to_yaml",
]

_OBJECT_FIELDS = ("model_op", "dataset", "val_dataset", "task")


def field_names(cls: type[Any]) -> list[str]:
    """The loop class's field names, in order."""
    return [f.name for f in fields(cls)]


def field_default(cls: type[Any], name: str) -> Any:
    """The default value of ``cls.<name>`` (a fresh copy for mutable defaults)."""
    for f in fields(cls):
        if f.name == name:
            if f.default_factory is not MISSING:
                return f.default_factory()
            return None if f.default is MISSING else f.default
    return None


def _plain(value: Any, name: str) -> Any:
    """Check that ``value`` is made of YAML-safe builtins."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v, name) for v in value]
    if isinstance(value, dict):
        # Scalar keys stay as they are (piecewise_constant's {step: scale} has int keys;
        # turning them into strings would break from_yaml(to_yaml()) == loop).
        return {
            (k if isinstance(k, (str, int, float, bool)) else str(k)): _plain(v, name)
            for k, v in value.items()
        }
    raise ConfigError(
        f"TrainingLoop.{name} holds a {type(value).__name__}, which YAML cannot hold",
        field=name,
    )


def to_dict(loop: LoopView) -> dict[str, Any]:
    """The YAML-able mapping of ``loop``; raises ``ConfigError`` naming a field with no form."""
    from .writers import writer_to_config

    out: dict[str, Any] = {}
    _check_optimizer_yaml(loop.optimizer_config)  # first: the Python-only optimiser forms
    for f in fields(loop):
        value = getattr(loop, f.name)
        if f.name in _OBJECT_FIELDS or f.name == "loss":
            if isinstance(value, FactoryRef):
                value = value.to_config(default_call=f.name != "loss")
            elif value is not None and not (f.name == "loss" and isinstance(value, str)):
                raise ConfigError(
                    f"TrainingLoop.{f.name} is a Python object; to write the loop as YAML, give "
                    f"it as a 'module:factory' import string instead",
                    field=f.name,
                )
        elif f.name == "callbacks":
            value = [_callback_to_config(cb, i) for i, cb in enumerate(value)]
        elif f.name == "metric_writer":
            value = writer_to_config(value)
        elif f.name == "sharding":
            if value is not None:
                raise ConfigError(
                    "TrainingLoop.sharding cannot be written to YAML (a mesh is built at run "
                    "time); set it in Python",
                    field="sharding",
                )
        out[f.name] = _plain(value, f.name)
    return out


def _check_optimizer_yaml(value: Any) -> None:
    """``ConfigError`` for the Python-only optimiser forms (an optax object, a schedule fn)."""
    from .optimizers import is_transformation

    if is_transformation(value):
        raise ConfigError(
            "TrainingLoop.optimizer_config is an optax.GradientTransformation, which exists "
            "only in Python; to write the loop as YAML give optimizer_config as a dict such "
            "as {'name': 'adamw', 'lr': 3e-4} (docs/optimizers.md)",
            field="optimizer_config",
        )
    for key in ("lr", "learning_rate"):
        if isinstance(value, Mapping) and callable(value.get(key)):
            raise ConfigError(
                f"TrainingLoop.optimizer_config.{key} is a Python callable (an optax "
                "schedule); to write the loop as YAML give a number or a schedule dict "
                "{'schedule': NAME, ...}",
                field=f"optimizer_config.{key}",
            )


def _callback_to_config(cb: Any, i: int) -> Any:
    if not isinstance(cb, (Callback, FactoryRef)):
        return cb
    try:
        return cb.to_config()
    except ConfigError as exc:
        raise ConfigError(f"TrainingLoop.callbacks[{i}]: {exc}", field="callbacks") from exc


def to_yaml(loop: LoopView) -> str:
    """The loop as YAML text (``yaml.safe_dump``)."""
    import yaml

    return yaml.safe_dump(to_dict(loop), sort_keys=False)


def _callback_from_config(item: Any, i: int, search_path: tuple[str, ...]) -> Any:
    name = f"callbacks[{i}]"
    if isinstance(item, str):
        if item in BUILTIN_CALLBACKS:
            return BUILTIN_CALLBACKS[item]()
        if ":" in item:
            return FactoryRef.from_config(item, name, search_path)
        raise ConfigError(
            f"{name}: unknown callback {item!r}; built-ins are "
            f"{', '.join(BUILTIN_CALLBACKS)}"
            + closest(item, BUILTIN_CALLBACKS)
            + ", or give 'module:Factory'",
            field=name,
        )
    elif isinstance(item, dict) and "factory" in item:
        return FactoryRef.from_config(item, name, search_path)
    elif isinstance(item, dict) and len(item) == 1:
        ((kind, kwargs),) = item.items()
        if kind in BUILTIN_CALLBACKS:
            if kwargs is None:
                kwargs = {}
            if not isinstance(kwargs, dict):
                raise ConfigError(
                    f"{name}: the arguments of {kind} must be a mapping such as "
                    f"{{{kind}: {{...}}}}, got {kwargs!r}",
                    field=name,
                )
            try:
                return BUILTIN_CALLBACKS[kind](**kwargs)
            except TypeError as exc:
                raise ConfigError(f"{name}: bad arguments for {kind}: {exc}", field=name) from exc
        raise ConfigError(
            f"{name}: unknown callback {kind!r}; built-ins are "
            f"{', '.join(BUILTIN_CALLBACKS)}"
            + closest(str(kind), BUILTIN_CALLBACKS)
            + ", or give 'module:Factory'",
            field=name,
        )
    raise ConfigError(
        f"{name}: write a callback as {{EarlyStopping: {{patience: 3}}}} or 'module:Factory'",
        field=name,
    )


def from_dict(cls: type[Any], data: Any, search_path: tuple[str, ...] = ()) -> Any:
    """Build a ``cls`` loop from a mapping; unknown keys are ``ConfigError``s."""
    if not isinstance(data, dict):
        raise ConfigError("a TrainingLoop YAML document must be a mapping of field: value")
    valid = field_names(cls)
    for key in data:
        if key not in valid:
            raise ConfigError(
                f"unknown TrainingLoop field {key!r} in YAML"
                + closest(str(key), valid)
                + f"; valid fields: {', '.join(valid)}",
                field=str(key),
            )
    kwargs = dict(data)
    for name in _OBJECT_FIELDS:
        if kwargs.get(name) is not None:
            kwargs[name] = FactoryRef.from_config(kwargs[name], name, search_path)
    loss = kwargs.get("loss")
    if isinstance(loss, dict) or (isinstance(loss, str) and ":" in loss):
        kwargs["loss"] = FactoryRef.from_config(loss, "loss", search_path, call=False)
    if kwargs.get("callbacks") is not None:
        if not isinstance(kwargs["callbacks"], list):
            raise ConfigError("callbacks must be a list in YAML", field="callbacks")
        kwargs["callbacks"] = [
            _callback_from_config(item, i, search_path)
            for i, item in enumerate(kwargs["callbacks"])
        ]
    return cls(**kwargs)


def from_yaml(cls: type[Any], path_or_text: str | os.PathLike[str]) -> Any:
    """Parse a YAML file (by path) or YAML text into a ``cls`` loop."""
    import yaml

    text, search_path = read_source(path_or_text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}") from exc
    return from_dict(cls, data, search_path)


def read_source(path_or_text: str | os.PathLike[str]) -> tuple[str, tuple[str, ...]]:
    """``(YAML text, import search path)`` of a file path or of YAML text."""
    if isinstance(path_or_text, os.PathLike) or (
        isinstance(path_or_text, str)
        and "\n" not in path_or_text
        and path_or_text.endswith((".yaml", ".yml"))
    ):
        path = Path(path_or_text)
        if not path.is_file():
            raise ConfigError(f"YAML file {str(path)!r} does not exist")
        return path.read_text(encoding="utf-8"), (str(path.resolve().parent), os.getcwd())
    return str(path_or_text), (os.getcwd(),)


def apply_overrides(cls: type[Any], data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply CLI ``--set field=value`` (dotted fields allowed; values parsed as YAML)."""
    import yaml

    data = dict(data)
    valid = field_names(cls)
    for item in overrides:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set expects field=value, got {item!r}")
        path = key.split(".")
        if path[0] not in valid:
            raise ConfigError(
                f"--set: unknown TrainingLoop field {path[0]!r}" + closest(path[0], valid),
                field=path[0],
            )
        value = yaml.safe_load(raw) if raw != "" else None
        if len(path) > 1 and data.get(path[0]) is None:
            # A nested override of a field the YAML leaves out starts from the field's
            # default: --set optimizer_config.lr=0.01 keeps the default optimiser name.
            data[path[0]] = field_default(cls, path[0])
        target = data
        for part in path[:-1]:
            nxt = target.get(part)
            if not isinstance(nxt, dict):
                nxt = {} if nxt is None else nxt
                if not isinstance(nxt, dict):
                    raise ConfigError(f"--set {key}: {part} is not a mapping", field=path[0])
            target[part] = dict(nxt)
            target = target[part]
        target[path[-1]] = value
    return data
