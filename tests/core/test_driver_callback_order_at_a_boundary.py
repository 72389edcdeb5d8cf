"""At a step where logging, evaluation and a checkpoint coincide the order is fixed:
on_step_end → evaluation → on_eval_end → save → on_checkpoint; within each hook the metric
writer comes first, then `TrainingLoop.callbacks` in list order."""

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


@pytest.mark.parametrize("steps_per_call", [1, 7, 40])
def test_order_of_hooks_at_a_shared_boundary(steps_per_call: int, tmp_path) -> None:
    events: list[tuple] = []
    a, b = Recorder("A", events), Recorder("B", events)
    writer = RecordingWriter(events)
    loop = toy_loop(
        max_steps=40,
        log_every_n_steps=10,
        eval_every_n_steps=20,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[a, Checkpoint(every_n_steps=40), b],
        checkpoint_dir=str(tmp_path),
        metric_writer=writer,
    )
    ckpt = RecordingCheckpointer(events=events)
    run_driver(
        loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
    )

    assert events[:2] == [("A", "run_start", 0), ("B", "run_start", 0)]
    assert events[-2:] == [("A", "run_end", 40), ("B", "run_end", 40)]
    at_40 = [e for e in events[2:-2] if e[2] == 40]
    assert at_40 == [
        ("writer", "write", 40),  # training metrics (LogToExperiment runs first)
        ("A", "step_end", 40),
        ("B", "step_end", 40),
        ("writer", "write", 40),  # evaluation metrics
        ("A", "eval_end", 40),
        ("B", "eval_end", 40),
        ("checkpointer", "save", 40),
        ("A", "checkpoint", 40),
        ("B", "checkpoint", 40),
    ]
    at_20 = [e for e in events if e[2] == 20]
    assert at_20 == [
        ("writer", "write", 20),
        ("A", "step_end", 20),
        ("B", "step_end", 20),
        ("writer", "write", 20),
        ("A", "eval_end", 20),
        ("B", "eval_end", 20),
    ]
    # The writer got the training row before the evaluation row.
    rows_40 = [m for s, m in writer.rows if s == 40]
    assert set(rows_40[0]) == {"loss", "param"} and set(rows_40[1]) == {"val_loss"}
    # The writer is flushed at run end and closed after every callback finished.
    assert writer.flushes >= 1 and writer.closed


def test_step_end_callbacks_see_fresh_metrics_and_eval_callbacks_see_val_metrics() -> None:
    seen: list[tuple[str, int, dict]] = []

    class Probe(Recorder):
        def on_step_end(self, loop, state) -> None:
            seen.append(("step", state.step, dict(state.metrics)))

        def on_eval_end(self, loop, state, metrics) -> None:
            seen.append(("eval", state.step, dict(metrics)))

    loop = toy_loop(
        max_steps=20,
        log_every_n_steps=10,
        eval_every_n_steps=20,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[Probe("p", [])],
    )
    program = ToyProgram()
    run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=3)
    assert [(k, s) for k, s, _ in seen] == [("step", 10), ("step", 20), ("eval", 20)]
    assert set(seen[0][2]) == {"loss", "param"}
    assert seen[2][2] == {"val_loss": program.evaluations[-1]}
