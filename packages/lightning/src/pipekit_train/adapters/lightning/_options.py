"""``TrainingLoop.backend_options`` for the lightning backend: pipekit's own keys + Trainer kwargs.

Pipekit's keys (``resume``, ``num_workers``) and the ``Trainer`` arguments users set most
(``precision``, ``devices``, ``accelerator``, ``strategy``, ``num_nodes``,
``accumulate_grad_batches``, …) are declared as specs and checked by core's one parser.
Every other key is passed to ``lightning.pytorch.Trainer`` after a check against
``inspect.signature(Trainer.__init__)``; the keys pipekit sets from the loop itself
(``max_steps`` …) are refused with the loop field to use instead.

Then the pass-through is tried once: a ``Trainer`` is constructed from it (nothing is
fitted, no file is written) and Lightning's own complaint — an accelerator not on this
machine, a strategy that does not fit the devices — becomes a ``ConfigError`` naming the
key, before the run touches ``checkpoint_dir``.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    parse_backend_options,
    require_instances,
)
from pipekit_train.errors import ConfigError, closest

__all__ = ["Options", "parse_options", "OPTION_SPECS", "trainer_parameters"]

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
    "gradient_clip_val": "optimizer_config.clip_norm",
    "gradient_clip_algorithm": "optimizer_config.clip_norm",
    "use_distributed_sampler": "nothing (pipekit splits each global batch across ranks itself)",
}

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


@dataclass
class Options:
    """Parsed backend options: pipekit's, and the Trainer keyword arguments."""

    resume: str = "auto"
    num_workers: int = 0
    trainer: dict[str, Any] = field(default_factory=dict)

    @property
    def accumulate(self) -> int:
        """Batches per optimiser step (``accumulate_grad_batches``, default 1)."""
        return int(self.trainer.get("accumulate_grad_batches", 1))


def trainer_parameters() -> set[str]:
    """The keyword arguments ``lightning.pytorch.Trainer`` accepts."""
    from lightning.pytorch import Trainer

    return set(inspect.signature(Trainer.__init__).parameters) - {"self"}


@contextlib.contextmanager
def _silent() -> Iterator[None]:
    """No warnings and no "GPU available" lines from a trial Trainer."""
    loggers = [logging.getLogger(n) for n in ("lightning.pytorch", "lightning.fabric")]
    levels = [lg.level for lg in loggers]
    try:
        for lg in loggers:
            lg.setLevel(logging.ERROR)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _try_trainer(kwargs: dict[str, Any]) -> Exception | None:
    import lightning.pytorch as pl

    fixed = {
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "max_steps": 1,
    }
    try:
        with _silent():
            pl.Trainer(**{**kwargs, **fixed})
    except Exception as exc:  # noqa: BLE001 - Lightning's complaint, named below
        return exc
    return None


def _plain(value: Any) -> bool:
    """Whether ``value`` is data (a YAML-able scalar, or a list / mapping of them)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def check_trainer_options(trainer: dict[str, Any]) -> None:
    """Construct a ``Trainer`` from the pass-through options given as plain values (nothing
    fits, no file is written); Lightning's complaint is a ``ConfigError`` naming the key that
    causes it."""
    # Plain values only: an object (a Strategy, a profiler, a plugin) would be configured by
    # the trial Trainer and then reused by the real one.
    kwargs = {k: v for k, v in trainer.items() if k != "callbacks" and _plain(v)}
    if not kwargs:
        return
    error = _try_trainer(kwargs)
    if error is None:
        return
    text = str(error)
    named = [k for k in kwargs if re.search(rf"\b{re.escape(k)}\b", text)]
    alone = [k for k in kwargs if _try_trainer({k: kwargs[k]}) is not None]
    culprit = (alone or named or list(kwargs))[0]
    others = [k for k in kwargs if k != culprit]
    also = f" (with {', '.join(others)} as given)" if others and not alone else ""
    raise ConfigError(
        f"backend_options.{culprit} = {kwargs[culprit]!r}{also} is refused by Lightning's "
        f"Trainer: {type(error).__name__}: {text.strip()}; change or drop "
        f"backend_options.{culprit}",
        field=f"backend_options.{culprit}",
    ) from error


def parse_options(options: dict[str, Any] | None) -> Options:
    """Validate ``backend_options``; ``ConfigError`` naming the first bad key."""
    parsed = parse_backend_options(options, OPTION_SPECS, backend="lightning", keep_unknown=True)
    known = trainer_parameters()
    for key in parsed.rest:
        if key in _OWNED:
            raise ConfigError(
                f"backend_options.{key}: pipekit sets the Trainer's {key} itself; use "
                f"{_OWNED[key]} instead",
                field=f"backend_options.{key}",
            )
        if key not in known:
            valid = sorted((known - set(_OWNED)) | set(PIPEKIT_KEYS))
            raise ConfigError(
                f"backend_options.{key}: lightning.pytorch.Trainer has no option {key!r}"
                f"{closest(key, valid)}; the lightning backend takes resume, num_workers and "
                f"these Trainer options: {', '.join(sorted(known - set(_OWNED)))}",
                field=f"backend_options.{key}",
            )
    trainer = {  # the user's order; the checked values of the declared keys
        k: parsed.values.get(k, v) for k, v in dict(options or {}).items() if k not in PIPEKIT_KEYS
    }
    check_trainer_options(trainer)
    return Options(resume=parsed["resume"], num_workers=parsed["num_workers"], trainer=trainer)
