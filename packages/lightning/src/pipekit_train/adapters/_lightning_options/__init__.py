"""The Lightning backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.lightning`` (whose ``__init__`` imports torch and lightning)
so that core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's options before
the backend is imported; the adapter's ``_options`` parses against the same tuple.

The Lightning backend passes unknown keys through to its ``Trainer`` (``KEEP_UNKNOWN``) and
keeps torch step files (``CHECKPOINT_STORE``).
"""

from __future__ import annotations

import re
from typing import Any

from pipekit_train.engine import RESUME_OPTION, OptionSpec, require_instances
from pipekit_train.errors import ConfigError, closest

__all__ = ["OPTION_SPECS", "KEEP_UNKNOWN", "CHECKPOINT_STORE", "PIPEKIT_KEYS", "LIGHT_CHECKS"]

#: Unknown keys are ``Trainer`` arguments, checked by the adapter against the Trainer.
KEEP_UNKNOWN = True
#: The store kind of this backend's checkpoint folder (``engine._inspect``).
CHECKPOINT_STORE = "torch-file"
#: The specs whose ``check`` imports nothing (the preflight runs them; the others need
#: Lightning: a registered accelerator or strategy, a precision, callback types).
LIGHT_CHECKS = frozenset({"devices", "deterministic"})

#: Trainer arguments pipekit derives from the loop; the value is the field to use instead.
_OWNED: dict[str, str] = {
    "max_steps": "TrainingLoop.max_steps",
    "max_epochs": "TrainingLoop.max_steps",
    "min_steps": "TrainingLoop.max_steps",
    "min_epochs": "TrainingLoop.max_steps",
    "max_time": "TrainingLoop.max_steps",
    "val_check_interval": "TrainingLoop.eval_every_n_steps",
    "check_val_every_n_epoch": "TrainingLoop.eval_every_n_steps",
    "log_every_n_steps": "TrainingLoop.log_every_n_steps",
    "enable_checkpointing": "TrainingLoop.checkpoint_dir and the Checkpoint callback",
    "enable_progress_bar": "the ProgressBar callback",
    "gradient_clip_val": "optimizer_config.clip_norm; beside a LightningModule's own "
    "configure_optimizers it passes through",
    "gradient_clip_algorithm": "optimizer_config.clip_norm; beside a LightningModule's own "
    "configure_optimizers it passes through",
    "use_distributed_sampler": "nothing (pipekit splits each global batch across ranks itself)",
}

#: Owned keys that pass through to the Trainer when the module brings its own
#: ``configure_optimizers`` (then ``optimizer_config``, and its ``clip_norm``, cannot be used).
CLIPPING = ("gradient_clip_val", "gradient_clip_algorithm")

#: The pipekit keys (not Trainer arguments).
PIPEKIT_KEYS = ("resume", "num_workers")


def _precisions() -> tuple[Any, ...]:
    import typing

    from lightning.fabric import connector

    out: list[Any] = []
    for name in ("_PRECISION_INPUT_STR", "_PRECISION_INPUT_INT", "_PRECISION_INPUT_STR_ALIAS"):
        out += typing.get_args(getattr(connector, name, ()))
    return tuple(out)


def _precision(value: Any) -> Any:
    allowed = _precisions()
    if allowed and not any(value == a and type(value) is type(a) for a in allowed):
        raise ConfigError(
            f"backend_options.precision = {value!r} is not a Lightning precision"
            f"{closest(str(value), [str(a) for a in allowed])}; valid: "
            f"{', '.join(repr(a) for a in allowed)} (or set TrainingLoop.precision)",
            field="backend_options.precision",
        )
    return value


def _devices(value: Any) -> Any:
    what = "an integer >= 1, -1 (all), 'auto', or a non-empty list of device indices"
    if isinstance(value, bool):
        raise ValueError(what)
    if isinstance(value, int):
        if value >= 1 or value == -1:
            return value
        raise ValueError(what)
    if isinstance(value, str):
        text = value.strip()
        if text == "auto" or re.fullmatch(r"-1|[1-9]\d*|\d+(,\s*\d+)*,?", text):
            return value
        raise ValueError(what)
    if isinstance(value, (list, tuple)) and value:
        if all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in value):
            return value
    raise ValueError(what)


def _registered(kind: str, value: Any) -> Any:
    """``accelerator`` / ``strategy``: a registered name, ``'auto'``, or a Lightning object."""
    if kind == "accelerator":
        from lightning.pytorch.accelerators import Accelerator, AcceleratorRegistry

        names = sorted({"auto", "gpu", *AcceleratorRegistry.available_accelerators()})
        base: type = Accelerator
    else:
        from lightning.pytorch.strategies import Strategy, StrategyRegistry

        names = ["auto", *StrategyRegistry.available_strategies()]
        base = Strategy
    if isinstance(value, base):
        return value
    if isinstance(value, str) and value.lower() in names:
        return value
    shown = ", ".join(names[:12]) + (", …" if len(names) > 12 else "")
    raise ConfigError(
        f"backend_options.{kind} = {value!r} is not a Lightning {kind}"
        f"{closest(str(value), names)}; valid: {shown} (or a lightning.pytorch "
        f"{base.__name__} object)",
        field=f"backend_options.{kind}",
    )


def _pl_callbacks(value: Any) -> list[Any]:
    if not value:
        return list(value)
    import lightning.pytorch as pl

    return require_instances(
        value,
        pl.Callback,
        key="callbacks",
        what="lightning.pytorch.Callback",
        hint="pipekit callbacks go in TrainingLoop.callbacks",
    )


def _trainer_arg(name: str, doc: str, check: Any, what: str) -> OptionSpec:
    """A ``Trainer`` argument whose value ``check`` judges (unset: Lightning's default)."""
    return OptionSpec(name, "any", None, f"Trainer: {doc}", optional=True, check=check, what=what)


#: Pipekit's keys, then the Trainer arguments checked here (the rest pass through).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    RESUME_OPTION,
    OptionSpec("num_workers", "int", 0, "the training loader's worker processes", low=0),
    _trainer_arg(
        "precision",
        "Lightning's precision (or set TrainingLoop.precision)",
        _precision,
        "a Lightning precision: '32-true', 'bf16-mixed', '16-mixed', …",
    ),
    _trainer_arg(
        "accelerator",
        "'cpu', 'cuda', 'mps', 'auto', … (one this machine has)",
        lambda v: _registered("accelerator", v),
        "a registered accelerator name or an Accelerator",
    ),
    _trainer_arg(
        "strategy",
        "'auto', 'ddp', 'ddp_spawn', 'fsdp', …, or a Strategy",
        lambda v: _registered("strategy", v),
        "a registered strategy name or a Strategy",
    ),
    _trainer_arg(
        "devices",
        "how many devices (or which); TrainingLoop.batch_size is the global batch",
        _devices,
        "an integer >= 1, -1 (all), 'auto', or a list of device indices",
    ),
    OptionSpec("num_nodes", "int", None, "Trainer: machines for DDP", low=1, optional=True),
    OptionSpec(
        "accumulate_grad_batches",
        "int",
        None,
        "Trainer: batches per optimiser step (or set TrainingLoop.accumulate_steps)",
        low=1,
        optional=True,
    ),
    OptionSpec(
        "deterministic",
        "any",
        None,
        "Trainer: deterministic torch algorithms (true, false or 'warn')",
        optional=True,
        check=lambda v: (
            v if isinstance(v, bool) or v == "warn" else _raise("true, false or 'warn'")
        ),
        what="true, false or 'warn'",
    ),
    OptionSpec("benchmark", "bool", None, "Trainer: cudnn.benchmark", optional=True),
    OptionSpec(
        "callbacks",
        "list",
        None,
        "Trainer: Lightning callbacks run beside pipekit's",
        optional=True,
        check=_pl_callbacks,
        what="a list of lightning.pytorch.Callback",
    ),
)


def _raise(what: str) -> Any:
    raise ValueError(what)
