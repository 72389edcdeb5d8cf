"""ProgressBar drives a real tqdm bar over `max_steps` on stderr through its hooks."""

from __future__ import annotations

import pytest
from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import ProgressBar, TrainerCarryState, TrainingLoop
from pipekit_train.driver import run_driver


def test_hooks_run_against_a_loop_and_write_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    loop = TrainingLoop(dataset={"x": [0.0], "y": [0.0]}, loss="mse", max_steps=40, backend="keras")
    bar = ProgressBar()
    state = TrainerCarryState()
    bar.on_run_start(loop, state)
    for step in (10, 20, 30, 40):
        state.step = step
        state.metrics = {"loss": 1.0 / step, "val_loss": 2.0 / step, "name": "x"}  # type: ignore[dict-item]
        bar.on_step_end(loop, state)
    bar.on_run_end(loop, state, {"final_step": 40})
    out = capsys.readouterr()
    assert out.out == ""
    assert "train[keras]" in out.err
    assert "40/40" in out.err
    assert "loss=0.025" in out.err
    # Ending twice and a step-end after the end are harmless.
    bar.on_run_end(loop, state, {})
    bar.on_step_end(loop, state)


def test_a_resumed_run_starts_the_bar_at_the_resumed_step(
    capsys: pytest.CaptureFixture[str],
) -> None:
    loop = TrainingLoop(dataset={"x": [0.0], "y": [0.0]}, loss="mse", max_steps=100)
    bar = ProgressBar(leave=True)
    state = TrainerCarryState(step=60)
    bar.on_run_start(loop, state)
    assert bar._bar is not None and bar._bar.n == 60
    state.step = 100
    bar.on_run_end(loop, state, {})
    assert "100/100" in capsys.readouterr().err


def test_progress_bar_in_a_driver_run(capsys: pytest.CaptureFixture[str]) -> None:
    loop = toy_loop(max_steps=50, log_every_n_steps=10, callbacks=[ProgressBar()])
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None, steps_per_call=7)
    err = capsys.readouterr().err
    assert "50/50" in err and "train[equinox]" in err


def test_yaml_form() -> None:
    assert ProgressBar(leave=False).to_config() == {"ProgressBar": {"leave": False}}
    assert ProgressBar() == ProgressBar()
