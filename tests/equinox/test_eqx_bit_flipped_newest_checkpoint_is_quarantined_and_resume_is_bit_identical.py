"""A newest checkpoint with 8 bytes inverted (same size) is caught by its checksum: a warning
names the step, it is renamed ``<step>.corrupt``, the run resumes from the step before and
ends with the uninterrupted run's bits (parameters, optimiser state, step)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from _eqx_helpers import backend_registered, leaves, tiny_loop
from checkpoint_damage import assert_flipped_newest_step_falls_back

from pipekit_train import Checkpoint, TrainingLoop


def _loop(ckpt: Path) -> TrainingLoop:
    return tiny_loop(
        max_steps=30,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10, keep_last=3)],
    )


def _params(op: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
    return {f"param_{i}": a for i, a in enumerate(leaves(op))}


def test_bit_flip_in_the_newest_step_falls_back_to_the_previous_one(tmp_path: Path) -> None:
    with backend_registered():
        assert_flipped_newest_step_falls_back(_loop, tmp_path / "ckpt", _params)
