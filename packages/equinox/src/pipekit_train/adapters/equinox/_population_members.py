"""A population's members: their overrides checked, and each member's solo ``TrainingLoop``.

A member is a mapping of dotted overrides of the loop's run-time hyper-parameters:

- ``"seed"`` (an int): the member's data order, step keys (dropout) and eval key, as
  ``TrainingLoop.seed`` is for a solo run. The model's initial weights are the loop's
  ``model_op`` for every member (the seed does not re-initialise it);
- ``"optimizer_config.lr"`` (a number): the constant learning rate, or, when the loop's
  ``lr`` is a schedule dict, that schedule's ``init_value`` (``value`` for
  ``constant``);
- ``"optimizer_config.lr.<field>"`` (a number): one numeric field of the loop's schedule
  (``peak_value``, ``end_value``, ``alpha``, ``decay_rate``, …);
- ``"optimizer_config.<name>"`` (a number): ``weight_decay`` or another float argument of
  the optax optimiser (``b1``, ``b2``, ``eps``, ``momentum``, …). Whether optax takes it
  at run time (``inject_hyperparams``) is checked when the optimisers are built
  (``_population``); one it does not take may only be the same for every member.

:func:`member_loop` builds the solo loop of one member: ``TrainingLoop(..., same
overrides).run()`` is what the member of a population equals (to float32 rounding).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.optimizers import is_transformation

__all__ = ["check_members", "member_loop", "LR_KEY", "OPT_PREFIX"]

OPT_PREFIX = "optimizer_config."
LR_KEY = "optimizer_config.lr"
_NOT_VARIED = {"name", "clip_norm", "learning_rate", "schedule"}
_EXAMPLE = '{"seed": 1, "optimizer_config.lr": 0.003, "optimizer_config.weight_decay": 1e-4}'


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _lr_key(config: Mapping[str, Any]) -> str:
    return "learning_rate" if "learning_rate" in config else "lr"


def _set(
    config: dict[str, Any], key: str, value: float, where: str, loop_lr: Any
) -> dict[str, Any]:
    """``config`` with the one optimiser override ``key`` (``optimizer_config.…``) applied."""
    out = dict(config)
    lr_name = _lr_key(config)
    if key == LR_KEY:
        lr = config.get(lr_name)
        if callable(lr):
            raise ConfigError(
                f"{where}: the loop's optimizer_config.lr is a Python schedule, which a "
                "member cannot change; give the loop a schedule dict or a number",
                field=where,
            )
        if isinstance(lr, Mapping):
            field = "value" if lr.get("schedule") == "constant" else "init_value"
            out[lr_name] = {**lr, field: value}
        else:
            out[lr_name] = value
        return out
    if key.startswith(LR_KEY + "."):
        field = key[len(LR_KEY) + 1 :]
        lr = config.get(lr_name)
        if not isinstance(lr, Mapping) or field == "schedule":
            raise ConfigError(
                f"{where}: the loop's optimizer_config.lr is {loop_lr!r}, not a schedule dict "
                f"with a numeric field {field!r}; vary optimizer_config.lr instead",
                field=where,
            )
        out[lr_name] = {**lr, field: value}
        return out
    out[key[len(OPT_PREFIX) :]] = value
    return out


def member_loop(loop: Any, member: Mapping[str, Any], index: int = 0) -> Any:
    """The solo ``TrainingLoop`` of one member: ``loop`` with ``member``'s overrides.

    Raises ``ConfigError`` naming ``members[index].<key>`` for a key that is not a
    run-time hyper-parameter or a value that is not a number (an int for ``seed``),
    and for a value ``TrainingLoop`` itself refuses (checked one override at a time).
    """
    if not isinstance(member, Mapping):
        raise ConfigError(
            f"members[{index}] must be a mapping of dotted overrides such as {_EXAMPLE}; "
            f"got {type(member).__name__}",
            field=f"members[{index}]",
        )
    current = loop
    for key, value in member.items():
        where = f"members[{index}].{key}"
        if not isinstance(key, str):
            raise ConfigError(f"members[{index}]: key {key!r} is not a string", field=where)
        if key == "seed":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ConfigError(f"{where} must be an integer, got {value!r}", field=where)
            changes: dict[str, Any] = {"seed": int(value)}
        elif key.startswith(OPT_PREFIX) and key[len(OPT_PREFIX) :].split(".")[0] not in (
            _NOT_VARIED
        ):
            if not _is_number(value):
                raise ConfigError(
                    f"{where} must be a finite number (a run-time hyper-parameter), got {value!r}",
                    field=where,
                )
            config = current.optimizer_config
            if is_transformation(config) or not isinstance(config, Mapping):
                raise ConfigError(
                    f"{where}: the loop's optimizer_config is the user's own optax object; "
                    "a population varies the hyper-parameters of an optimizer_config dict",
                    field=where,
                )
            if "." in key[len(OPT_PREFIX) :] and not key.startswith(LR_KEY + "."):
                raise ConfigError(
                    f"{where}: only optimizer_config.lr.<field> is nested", field=where
                )
            changes = {
                "optimizer_config": _set(
                    dict(config), key, float(value), where, loop.optimizer_config.get("lr")
                )
            }
        else:
            raise ConfigError(
                f"{where}: a population varies only hyper-parameters injectable at run time: "
                "seed, optimizer_config.lr (or optimizer_config.lr.<schedule field>), "
                "optimizer_config.weight_decay and the optimiser's float arguments "
                "(optimizer_config.b1, .b2, .eps, .momentum, …); run other changes as "
                "separate trials",
                field=where,
            )
        try:
            current = dataclasses.replace(current, **changes)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}", field=where) from exc
    return current


def check_members(loop: Any, members: Any) -> list[Any]:
    """Every member's solo loop, in order; ``ConfigError`` for any bad member."""
    if isinstance(members, (str, bytes, Mapping)) or not isinstance(members, Sequence):
        raise ConfigError(
            f"members must be a list of override mappings such as [{_EXAMPLE}, ...]; "
            f"got {type(members).__name__}",
            field="members",
        )
    if not members:
        raise ConfigError("members is empty; give at least one member", field="members")
    if getattr(loop, "backend", None) != "equinox":
        raise ConfigError(
            f"TrainingLoop.backend is {getattr(loop, 'backend', None)!r}; populations run on "
            "the equinox backend only (run other backends as sequential trials)",
            field="backend",
        )
    return [member_loop(loop, member, i) for i, member in enumerate(members)]
