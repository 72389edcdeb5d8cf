"""The loop's training-feature fields, mapped onto Lightning's own Trainer options.

``accumulate_steps`` → ``accumulate_grad_batches`` (Lightning's ``max_steps`` counts
optimiser steps, as the loop's does) and ``precision`` → Lightning's precision
plugin (``"bfloat16"`` → ``"bf16-true"``, ``"mixed-bfloat16"`` → ``"bf16-mixed"``).
``ema_decay`` is pipekit's own average (``_ema.WeightEMA``, torch's EMA update), used for
evaluation and the returned op. Giving the same setting
both ways (a loop field and the Trainer option) must agree, else ``ConfigError``.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.errors import ConfigError
from pipekit_train.loop import require_features

from ._options import Options

__all__ = ["apply_loop_features"]

#: The loop's ``precision`` → Lightning's ``Trainer(precision=...)``.
PRECISION: dict[str, str] = {
    "float32": "32-true",
    "bfloat16": "bf16-true",
    "mixed-bfloat16": "bf16-mixed",
}


def _set(options: Options, key: str, value: Any, field: str) -> None:
    given = options.trainer.get(key)
    if given is not None and given != value:
        raise ConfigError(
            f"TrainingLoop.{field} asks for {key}={value!r} but backend_options.{key} is "
            f"{given!r}; set one of them",
            field=f"backend_options.{key}",
        )
    options.trainer[key] = value


def apply_loop_features(loop: Any, options: Options) -> None:
    """Put ``accumulate_steps`` and ``precision`` into ``options.trainer`` (``ema_decay`` is
    the bridge's); refuse a feature field this backend does not know."""
    require_features(
        loop, supported=("accumulate_steps", "ema_decay", "precision"), backend="lightning"
    )
    if loop.accumulate_steps != 1:
        _set(options, "accumulate_grad_batches", int(loop.accumulate_steps), "accumulate_steps")
    if loop.precision != "float32":
        _set(options, "precision", PRECISION[loop.precision], "precision")
