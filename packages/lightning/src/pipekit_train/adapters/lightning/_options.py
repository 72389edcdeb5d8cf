"""``TrainingLoop.backend_options`` for the lightning backend: pipekit's own keys + Trainer kwargs.

Pipekit's keys: ``resume`` (``"auto"``, ``"force"``, ``"never"``; see
``docs/checkpointing.md``) and ``num_workers`` (the training loader's worker
processes, default 0). Every other key is passed to ``lightning.pytorch.Trainer``
(``precision``, ``accumulate_grad_batches``, ``strategy``, ``devices``,
``accelerator``, …) and checked against ``inspect.signature(Trainer.__init__)``,
so a misspelt option is a ``ConfigError`` naming it. The keys pipekit sets from
the loop itself (``max_steps`` …) are refused with the loop field to use instead.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from pipekit_train.engine import parse_resume
from pipekit_train.errors import ConfigError, closest

__all__ = ["Options", "parse_options"]


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


def parse_options(options: dict[str, Any]) -> Options:
    """Validate ``backend_options``; ``ConfigError`` naming the first bad key."""
    out = Options()
    rest = dict(options)
    resume = rest.pop("resume", "auto")
    out.resume = parse_resume(resume)
    workers = rest.pop("num_workers", 0)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 0:
        raise ConfigError(
            f"backend_options.num_workers must be an integer >= 0, got {workers!r}",
            field="backend_options.num_workers",
        )
    out.num_workers = workers
    known = trainer_parameters()
    for key in rest:
        if key in _OWNED:
            raise ConfigError(
                f"backend_options.{key}: pipekit sets the Trainer's {key} itself; use "
                f"{_OWNED[key]} instead",
                field=f"backend_options.{key}",
            )
        if key not in known:
            valid = sorted((known - set(_OWNED)) | {"resume", "num_workers"})
            raise ConfigError(
                f"backend_options.{key}: lightning.pytorch.Trainer has no option {key!r}"
                f"{closest(key, valid)}; the lightning backend takes resume, num_workers and "
                f"these Trainer options: {', '.join(sorted(known - set(_OWNED)))}",
                field=f"backend_options.{key}",
            )
    accumulate = rest.get("accumulate_grad_batches", 1)
    if not isinstance(accumulate, int) or isinstance(accumulate, bool) or accumulate < 1:
        raise ConfigError(
            f"backend_options.accumulate_grad_batches must be an integer >= 1, got {accumulate!r}",
            field="backend_options.accumulate_grad_batches",
        )
    out.trainer = rest
    return out
