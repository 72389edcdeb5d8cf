"""``Checkpoint(every_n_seconds=…)`` through the Lightning bridge: saves fall on its host events
(here the log steps), besides the final one; a tiny interval makes that every log step, so the
assertion is on which steps, never on a time."""

from __future__ import annotations

from pathlib import Path

from _lightning_helpers import loop

from pipekit_train import Callback, Checkpoint


class Saves(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_checkpoint(self, loop, state, step) -> None:
        self.steps.append(step)


def test_time_cadence_saves_at_log_steps(tmp_path: Path) -> None:
    saves = Saves()
    _, info = loop(
        max_steps=12,
        log_every_n_steps=3,
        checkpoint_dir=str(tmp_path),
        callbacks=[Checkpoint(every_n_seconds=1e-6, keep_last=None), saves],
    ).run()
    assert info["final_step"] == 12
    assert set(saves.steps) <= {3, 6, 9, 12} and saves.steps[-1] == 12
    assert len(saves.steps) > 1  # at least one save the clock decided
    on_disk = sorted(int(p.name[5:14]) for p in tmp_path.glob("step-*.pt"))
    assert on_disk == saves.steps
