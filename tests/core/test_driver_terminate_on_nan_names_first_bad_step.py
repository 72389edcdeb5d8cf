"""TerminateOnNaN raises TrainingError naming the first non-finite step even when that step
is in the middle of a fused chunk; the bad state is never checkpointed, and pending
checkpoint writes are still drained (wait) and the checkpointer and writer closed."""

from __future__ import annotations

import math

import pytest
from _core_toy_backend import (
    Recorder,
    RecordingCheckpointer,
    RecordingWriter,
    ToyData,
    ToyProgram,
    toy_loop,
)

from pipekit_train import Checkpoint, PipekitError, TerminateOnNaN, TrainingError
from pipekit_train.engine import run_driver


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("steps_per_call", [1, 3, 7, 50])
def test_first_bad_step_is_named_and_not_checkpointed(
    steps_per_call: int, bad: float, tmp_path
) -> None:
    events: list[tuple] = []
    recorder = Recorder("rec", events)
    writer = RecordingWriter(events)
    loop = toy_loop(
        max_steps=100,
        log_every_n_steps=10,
        callbacks=[TerminateOnNaN(), Checkpoint(every_n_steps=10), recorder],
        checkpoint_dir=str(tmp_path),
        metric_writer=writer,
    )
    # Step 23 is the first bad one; with K >= 3 it sits inside a chunk (21..23, 22..28, …).
    program = ToyProgram(loss_at=lambda s, p, b: bad if s >= 23 else (p - b) ** 2)
    ckpt = RecordingCheckpointer()
    with pytest.raises(TrainingError) as info:
        run_driver(
            loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
        )
    exc = info.value
    assert isinstance(exc, PipekitError)
    assert "at step 23" in str(exc) and "loss" in str(exc)
    # Only the good states were saved; the step-30 boundary (and 23) never was.
    assert ckpt.saved_steps == [10, 20]
    assert recorder.steps("checkpoint") == [10, 20]
    assert all(s < 30 for s in recorder.steps("step_end"))
    # The run stopped at the first host event after the bad step.
    assert sum(k for _, k in program.calls) == 30
    # Pending writes drained, resources released, even though the run failed.
    assert ckpt.wait_calls >= 1 and ckpt.close_calls == 1
    assert writer.closed
    assert recorder.steps("run_end") == []


def test_terminate_on_nan_watches_the_named_metric_only() -> None:
    loop = toy_loop(max_steps=20, callbacks=[TerminateOnNaN(monitor="param")])
    # loss goes NaN (the program then also sets the parameter to NaN): caught through "param".
    program = ToyProgram(loss_at=lambda s, p, b: math.nan if s == 5 else 0.0)
    with pytest.raises(TrainingError, match="param became nan at step 5"):
        run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=4)


def test_finite_run_is_not_interrupted() -> None:
    loop = toy_loop(max_steps=30, callbacks=[TerminateOnNaN()])
    result = run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None)
    assert result.final_step == 30
