"""ProgressBar, driven by the real driver over the toy backend: it counts to `max_steps`, shows
the latest logged loss, starts a resumed run at the resumed step, writes only to stderr, and
survives a YAML round trip."""

from __future__ import annotations

import re

import pytest
from _core_toy_backend import RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint, ProgressBar, TrainingLoop
from pipekit_train.driver import run_driver


def _frames(err: str) -> list[str]:
    """The successive renderings of the bar (tqdm redraws with carriage returns)."""
    return [f for f in re.split(r"[\r\n]", err) if "train[" in f]


def test_counts_to_max_steps_with_the_last_loss_on_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    loop = toy_loop(max_steps=50, log_every_n_steps=10, callbacks=[ProgressBar()])
    result = run_driver(
        loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None, steps_per_call=7
    )
    out = capsys.readouterr()
    assert out.out == ""
    frames = _frames(out.err)
    assert "0/50" in frames[0] and "50/50" in frames[-1]
    shown = re.search(r"loss=([-+0-9.e]+)", frames[-1])
    assert shown is not None, frames[-1]
    assert float(shown.group(1)) == pytest.approx(result.state.metrics["loss"], rel=1e-3)


def test_a_resumed_run_starts_the_bar_at_the_resumed_step(
    capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    first = RecordingCheckpointer()
    loop = toy_loop(
        max_steps=60, callbacks=[Checkpoint(every_n_steps=60)], checkpoint_dir=str(tmp_path)
    )
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=first)
    capsys.readouterr()
    resumed = toy_loop(
        max_steps=100,
        callbacks=[Checkpoint(every_n_steps=60), ProgressBar()],
        checkpoint_dir=str(tmp_path),
    )
    run_driver(
        resumed,
        ToyProgram(),
        0.0,
        data=ToyData(),
        checkpointer=RecordingCheckpointer(restore_from=first.saves[-1]),
    )
    frames = _frames(capsys.readouterr().err)
    assert "60/100" in frames[0], frames
    assert "100/100" in frames[-1], frames


def test_survives_a_yaml_round_trip() -> None:
    loop = TrainingLoop(
        dataset="_core_factories:make_dataset", loss="mse", callbacks=[ProgressBar(leave=False)]
    )
    again = TrainingLoop.from_yaml(loop.to_yaml())
    assert again.callbacks == [ProgressBar(leave=False)]
    assert again.callbacks != [ProgressBar(leave=True)]
