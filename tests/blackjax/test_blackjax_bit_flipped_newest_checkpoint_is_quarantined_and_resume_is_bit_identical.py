"""A newest blackjax checkpoint with 8 bytes inverted (same size) is caught by its checksum: a
warning names the step, it is renamed ``<step>.corrupt``, the run resumes from the step before
and ends with the uninterrupted run's bits (every draw; the trace saved with the state)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _bjx_helpers import gauss_task, loop_for
from checkpoint_damage import assert_flipped_newest_step_falls_back

from pipekit_train import Checkpoint, TrainingLoop

# The tiny run is far from converged; its convergence warnings are not under test.
pytestmark = pytest.mark.filterwarnings("ignore:blackjax:UserWarning")


def _loop(ckpt: Path) -> TrainingLoop:
    return loop_for(
        gauss_task(num_warmup=10, num_samples=20, num_chains=2),
        "nuts",
        dataset=None,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10, keep_last=3)],
        log_every_n_steps=5,
    )


def _draws(op: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in op.samples_by_chain.items()}


def test_bit_flip_in_the_newest_step_falls_back_to_the_previous_one(tmp_path: Path) -> None:
    assert_flipped_newest_step_falls_back(_loop, tmp_path / "ckpt", _draws)
