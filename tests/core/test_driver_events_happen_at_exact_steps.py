"""Every host event — log, eval, checkpoint, a callback's own `every_n_steps`, max_steps —
happens at its exact step whatever `steps_per_call` is: chunks never straddle an event."""

from __future__ import annotations

import pytest
from _core_toy_backend import (
    Recorder,
    RecordingCheckpointer,
    RecordingWriter,
    ToyData,
    ToyProgram,
    toy_loop,
)

from pipekit_train import Checkpoint
from pipekit_train.engine import run_driver

MAX_STEPS = 100
LOG, EVAL, CKPT, CUSTOM = 10, 25, 40, 15


def _multiples(n: int) -> set[int]:
    return set(range(n, MAX_STEPS + 1, n))


EVENT_STEPS = sorted(
    _multiples(LOG) | _multiples(EVAL) | _multiples(CKPT) | _multiples(CUSTOM) | {MAX_STEPS}
)


@pytest.mark.parametrize("steps_per_call", [1, 3, 7, 50])
def test_events_happen_at_their_exact_steps(steps_per_call: int, tmp_path) -> None:
    events: list[tuple] = []
    recorder = Recorder("rec", events, every_n_steps=CUSTOM)
    writer = RecordingWriter(events)
    loop = toy_loop(
        max_steps=MAX_STEPS,
        log_every_n_steps=LOG,
        eval_every_n_steps=EVAL,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[Checkpoint(every_n_steps=CKPT), recorder],
        checkpoint_dir=str(tmp_path),
        metric_writer=writer,
    )
    program, data, ckpt = ToyProgram(), ToyData(), RecordingCheckpointer()
    result = run_driver(
        loop, program, 0.0, data=data, checkpointer=ckpt, steps_per_call=steps_per_call
    )

    assert result.final_step == MAX_STEPS and result.stop_reason is None
    assert result.resumed_from_step is None and result.interrupted is None
    assert result.steps_run == MAX_STEPS
    # Host events: on_step_end exactly at the union of all cadences.
    assert recorder.steps("step_end") == EVENT_STEPS
    assert recorder.steps("eval_end") == sorted(_multiples(EVAL))
    assert recorder.steps("checkpoint") == [40, 80, 100]
    assert ckpt.saved_steps == [40, 80, 100]
    assert [s for s, m in writer.rows if "loss" in m] == sorted(_multiples(LOG))
    assert [s for s, m in writer.rows if "val_loss" in m] == sorted(_multiples(EVAL))
    # Chunks: at most steps_per_call steps, contiguous, each ending at or before an event.
    starts = [s for s, _ in program.calls]
    sizes = [k for _, k in program.calls]
    assert max(sizes) <= steps_per_call
    assert sum(sizes) == MAX_STEPS and starts[0] == 0
    assert all(s + k == nxt for (s, k), nxt in zip(program.calls, starts[1:], strict=False))
    ends = {s + k for s, k in program.calls}
    assert set(EVENT_STEPS) <= ends
    assert data.chunks == sizes  # the data stream was asked for exactly each chunk
    # One fetch (device→host transfer) per host event, not per step.
    assert program.fetches == len(EVENT_STEPS)
    # The checkpointer is drained and closed, the writer flushed and closed.
    assert ckpt.wait_calls >= 1 and ckpt.close_calls == 1
    assert writer.flushes >= 1 and writer.closed


@pytest.mark.parametrize("steps_per_call", [1, 4, 50])
def test_max_steps_not_a_multiple_of_any_cadence_is_still_an_event(steps_per_call: int) -> None:
    events: list[tuple] = []
    recorder = Recorder("rec", events)
    writer = RecordingWriter(events)
    loop = toy_loop(max_steps=23, log_every_n_steps=10, callbacks=[recorder], metric_writer=writer)
    program = ToyProgram()
    result = run_driver(
        loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=steps_per_call
    )
    assert result.final_step == 23
    assert recorder.steps("step_end") == [10, 20, 23]
    # The final step is always logged.
    assert [s for s, _ in writer.rows] == [10, 20, 23]
    assert sum(k for _, k in program.calls) == 23


def test_without_a_checkpointer_nothing_is_saved_and_without_val_nothing_evaluated() -> None:
    events: list[tuple] = []
    recorder = Recorder("rec", events)
    loop = toy_loop(max_steps=30, callbacks=[recorder])
    program = ToyProgram()
    run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=8)
    assert recorder.steps("checkpoint") == [] and recorder.steps("eval_end") == []
    assert program.evaluations == []


def test_full_batch_program_gets_no_batches() -> None:
    """`data=None` (a full-batch program such as an MCMC draw): `batches` is None."""
    program = ToyProgram()
    loop = toy_loop(max_steps=12)
    result = run_driver(loop, program, 0.0, data=None, checkpointer=None, steps_per_call=5)
    assert result.final_step == 12
    assert program.calls == [(0, 5), (5, 5), (10, 2)]


def test_final_evaluation_happens_even_without_eval_cadence() -> None:
    events: list[tuple] = []
    recorder = Recorder("rec", events)
    loop = toy_loop(max_steps=30, val_dataset={"x": [0.0], "y": [1.0]}, callbacks=[recorder])
    result = run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None)
    assert recorder.steps("eval_end") == [30]
    assert set(result.eval_metrics) == {"val_loss"}
    assert result.state.metrics["val_loss"] == result.eval_metrics["val_loss"]
