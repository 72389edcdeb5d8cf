"""Fusing K steps per call changes nothing: the final carry, every step's metric values,
the evaluations, the checkpoints and the logged rows are identical for every K — and equal
to a plain step-by-step loop written without the driver."""

from __future__ import annotations

from typing import Any

import pytest
from _core_toy_backend import (
    Recorder,
    RecordingCheckpointer,
    RecordingWriter,
    ToyData,
    ToyProgram,
    step_noise,
    toy_loop,
)

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver

MAX_STEPS = 100
STEPS_PER_CALL = [1, 3, 7, 50]


def _run(steps_per_call: int, tmp_path) -> dict[str, Any]:
    events: list[tuple] = []
    recorder = Recorder("rec", events)
    writer = RecordingWriter()
    loop = toy_loop(
        max_steps=MAX_STEPS,
        log_every_n_steps=10,
        eval_every_n_steps=20,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[Checkpoint(every_n_steps=30), recorder],
        checkpoint_dir=str(tmp_path),
        metric_writer=writer,
    )
    program, ckpt = ToyProgram(lr=0.07), RecordingCheckpointer()
    result = run_driver(
        loop, program, 0.25, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
    )
    return {
        "carry": result.carry,
        "history": recorder.history,
        "evaluations": program.evaluations,
        "saves": [(s.step, s.state, s.data_state, s.meta["metrics"]) for s in ckpt.saves],
        "rows": writer.rows,
        "metrics": result.state.metrics,
        "final_step": result.final_step,
    }


def test_every_steps_per_call_gives_identical_results(tmp_path) -> None:
    runs = {k: _run(k, tmp_path) for k in STEPS_PER_CALL}
    reference = runs[1]
    for k, got in runs.items():
        for key in reference:
            assert got[key] == reference[key], f"steps_per_call={k}: {key} differs from K=1"


def test_window_history_covers_every_step_once_in_order(tmp_path) -> None:
    history = _run(7, tmp_path)["history"]
    assert [s for s, _ in history] == list(range(1, MAX_STEPS + 1))


@pytest.mark.parametrize("steps_per_call", STEPS_PER_CALL)
def test_driver_matches_a_hand_written_loop(steps_per_call: int, tmp_path) -> None:
    param, losses = 0.25, []
    for s in range(1, MAX_STEPS + 1):
        batch = ToyData.value(s - 1)
        param = param - 0.07 * 2.0 * (param - batch) + step_noise(s)
        losses.append((param - batch) ** 2)
    got = _run(steps_per_call, tmp_path)
    assert got["carry"] == param
    assert [v for _, v in got["history"]] == losses
