"""An error raised inside `fit` (here by a callback) comes out unchanged after teardown.

Every callback's ``on_exception`` runs, the metric writer is flushed and closed, pending
asynchronous checkpoint writes finish, and the checkpoints already committed stay valid.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _keras_helpers import digits, mlp

from pipekit_train import Callback, Checkpoint, TrainingLoop
from pipekit_train.engine import inspect_checkpoints


class Boom(Callback):
    def __init__(self) -> None:
        self.seen_error: BaseException | None = None

    def on_step_end(self, loop, state) -> None:
        if state.step == 10:
            raise RuntimeError("boom at 10")

    def on_exception(self, loop, state, error) -> None:
        self.seen_error = error


def test_error_out_of_fit_is_unchanged_and_checkpoints_stay_valid(tmp_path: Path) -> None:
    boom = Boom()
    metrics = tmp_path / "m.jsonl"
    with pytest.raises(RuntimeError, match="boom at 10"):
        TrainingLoop(
            model_op=mlp(hidden=8), dataset=digits(256), loss="cross_entropy", batch_size=32,
            max_steps=30, log_every_n_steps=5, checkpoint_dir=str(tmp_path / "ckpt"),
            callbacks=[Checkpoint(every_n_steps=5), boom], metric_writer=f"jsonl:{metrics}",
            backend="keras",
        ).run()  # fmt: skip
    assert isinstance(boom.seen_error, RuntimeError)
    rows = inspect_checkpoints(tmp_path / "ckpt")
    assert [r["step"] for r in rows] == [5] and rows[0]["valid"]
    written = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in written] == [5, 10]
