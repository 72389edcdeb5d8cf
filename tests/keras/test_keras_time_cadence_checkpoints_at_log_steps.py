"""``Checkpoint(every_n_seconds=…)`` through the Keras bridge: saves fall on its host events
(here the log steps), besides the final one; a tiny interval makes that every log step, so the
assertion is on which steps, never on a time."""

from __future__ import annotations

from pathlib import Path

from _keras_helpers import digits, mlp

from pipekit_train import Callback, Checkpoint, TrainingLoop


class Saves(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_checkpoint(self, loop, state, step) -> None:
        self.steps.append(step)


def test_time_cadence_saves_at_log_steps(tmp_path: Path) -> None:
    saves = Saves()
    ckpt = tmp_path / "ckpt"
    _, info = TrainingLoop(
        model_op=mlp(hidden=8), dataset=digits(128), loss="cross_entropy", batch_size=32,
        max_steps=12, log_every_n_steps=3, checkpoint_dir=str(ckpt), backend="keras",
        callbacks=[Checkpoint(every_n_seconds=1e-6, keep_last=None), saves],
    ).run()  # fmt: skip
    assert info["final_step"] == 12
    assert set(saves.steps) <= {3, 6, 9, 12} and saves.steps[-1] == 12
    assert len(saves.steps) > 1  # at least one save the clock decided
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == saves.steps
