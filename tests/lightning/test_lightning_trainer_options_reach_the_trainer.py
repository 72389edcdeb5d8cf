"""``backend_options`` reach Lightning's Trainer: gradient accumulation counts optimiser steps.

With ``accumulate_grad_batches=2`` the run takes ``max_steps`` optimiser steps over twice as
many batches; ``state.window`` has one (mean) loss per optimiser step; the resume guard
records the accumulation, so a checkpoint written without it is refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _lightning_helpers import loop

from pipekit_train import Callback
from pipekit_train.errors import CheckpointError


class Steps(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_step_end(self, loop, state) -> None:
        self.steps += state.window_steps


def test_accumulation_counts_optimiser_steps(tmp_path: Path) -> None:
    seen = Steps()
    options = {"accelerator": "cpu", "accumulate_grad_batches": 2}
    _, info = loop(
        max_steps=6, callbacks=[seen], backend_options=options, checkpoint_dir=str(tmp_path)
    ).run()
    assert info["final_step"] == 6 and seen.steps == [1, 2, 3, 4, 5, 6]
    with pytest.raises(CheckpointError, match="accumulate_grad_batches"):
        loop(max_steps=6, checkpoint_dir=str(tmp_path)).run()
