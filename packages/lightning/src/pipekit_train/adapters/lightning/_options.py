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

from pipekit_train.adapters._lightning_options import _OWNED as _OWNED
from pipekit_train.adapters._lightning_options import CLIPPING, OPTION_SPECS, PIPEKIT_KEYS
from pipekit_train.engine import (
    parse_backend_options,
)
from pipekit_train.errors import ConfigError, closest

__all__ = ["Options", "parse_options", "check_clipping", "OPTION_SPECS", "trainer_parameters"]


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


def check_clipping(options: Options, own_optimizer: bool) -> None:
    """``gradient_clip_*`` pass through beside the module's own ``configure_optimizers`` only.

    With the loop's optimiser, clipping is ``optimizer_config.clip_norm`` (the same on every
    backend); with the module's own, ``optimizer_config`` cannot be given, so the Trainer's
    options are the way — each refusal points at the way that works, never at the other.
    """
    for key in CLIPPING:
        if key in options.trainer and not own_optimizer:
            raise ConfigError(
                f"backend_options.{key}: with the loop's optimiser (optimizer_config) pipekit "
                "sets the Trainer's gradient clipping itself; give optimizer_config="
                '{..., "clip_norm": value} (global-norm clipping) instead. '
                f"backend_options.{key} is taken beside a LightningModule's own "
                "configure_optimizers",
                field=f"backend_options.{key}",
            )


def parse_options(options: dict[str, Any] | None) -> Options:
    """Validate ``backend_options``; ``ConfigError`` naming the first bad key."""
    parsed = parse_backend_options(options, OPTION_SPECS, backend="lightning", keep_unknown=True)
    known = trainer_parameters()
    for key in parsed.rest:
        if key in _OWNED and key not in CLIPPING:  # clipping: check_clipping, knowing the module
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
