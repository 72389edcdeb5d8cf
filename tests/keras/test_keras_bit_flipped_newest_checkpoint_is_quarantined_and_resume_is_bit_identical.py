"""A newest Keras checkpoint with 8 bytes inverted (same size) is caught by its checksum: a
warning names the step, it is renamed ``<step>.corrupt``, the run resumes from the step before
and ends with the uninterrupted run's bits (every model and optimiser variable)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from _keras_helpers import digits, mlp, variables
from checkpoint_damage import assert_flipped_newest_step_falls_back

from pipekit_train import Checkpoint, TrainingLoop


def _loop(ckpt: Path) -> TrainingLoop:
    return TrainingLoop(
        model_op=mlp(hidden=16, dropout=0.3, seed=0),
        dataset=digits(200),
        loss="cross_entropy",
        batch_size=32,
        max_steps=30,
        log_every_n_steps=5,
        optimizer_config={"name": "adamw", "lr": 3e-3},
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10, keep_last=3)],
        backend="keras",
    )


def _variables(op: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
    model = getattr(op, "model", op)
    return {f"var_{i}": v for i, v in enumerate(variables(model))}


def test_bit_flip_in_the_newest_step_falls_back_to_the_previous_one(tmp_path: Path) -> None:
    assert_flipped_newest_step_falls_back(_loop, tmp_path / "ckpt", _variables)
