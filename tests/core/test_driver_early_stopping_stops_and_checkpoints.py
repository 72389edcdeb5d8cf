"""EarlyStopping ends the run at the exact check where patience runs out (for any
steps_per_call), the stop step is checkpointed, and the reason is reported."""

from __future__ import annotations

import pytest
from _core_toy_backend import Recorder, RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Checkpoint, EarlyStopping
from pipekit_train.engine import run_driver


@pytest.mark.parametrize("steps_per_call", [1, 3, 7, 50])
def test_training_metric_monitor_stops_at_the_right_log_step(steps_per_call: int, tmp_path) -> None:
    # loss falls until step 30, then rises: checks (every 10 steps) improve at 10, 20, 30,
    # then do not at 40 (wait 1) and 50 (wait 2 == patience) -> stop at step 50.
    es = EarlyStopping(monitor="loss", patience=2, mode="min")
    recorder = Recorder("rec", [])
    loop = toy_loop(
        max_steps=200,
        log_every_n_steps=10,
        callbacks=[es, Checkpoint(every_n_steps=1000), recorder],
        checkpoint_dir=str(tmp_path),
    )
    program = ToyProgram(loss_at=lambda s, p, b: float(abs(s - 30)))
    ckpt = RecordingCheckpointer()
    result = run_driver(
        loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
    )
    assert result.final_step == 50 and es.stopped_at == 50
    assert sum(k for _, k in program.calls) == 50  # not one step more
    assert result.stop_reason is not None and "EarlyStopping" in result.stop_reason
    assert result.interrupted is None
    assert result.state.best == {"loss": 0.0}
    # The stop step is checkpointed (the cadence alone would not have saved anything).
    assert ckpt.saved_steps == [50]
    assert ckpt.saves[0].meta["callbacks"][0] == {"best": 0.0, "wait": 2}
    assert recorder.steps("checkpoint") == [50]
    assert recorder.steps("run_end") == [50]


@pytest.mark.parametrize("steps_per_call", [1, 7, 50])
@pytest.mark.parametrize(
    ("mode", "values", "stop_step"),
    [
        ("min", [5.0, 4.0, 3.0, 3.5, 3.2, 3.1, 9.0], 60),  # best at eval 3 (step 30), patience 3
        ("max", [0.1, 0.5, 0.4, 0.45, 0.6, 0.55, 0.5, 0.2], 80),  # best at step 50
    ],
)
def test_validation_monitor_stops_after_patience_evaluations(
    steps_per_call: int, mode: str, values: list[float], stop_step: int, tmp_path
) -> None:
    es = EarlyStopping(monitor="val_loss", patience=3, mode=mode)
    loop = toy_loop(
        max_steps=500,
        log_every_n_steps=5,
        eval_every_n_steps=10,
        val_dataset={"x": [0.0], "y": [1.0]},
        callbacks=[es],
        checkpoint_dir=str(tmp_path),
    )
    program = ToyProgram(val_losses=values)
    ckpt = RecordingCheckpointer()
    result = run_driver(
        loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
    )
    assert result.final_step == stop_step
    assert len(program.evaluations) == stop_step // 10
    assert ckpt.saved_steps == [stop_step]  # default Checkpoint(500) would not save here
    best = min(values[: stop_step // 10]) if mode == "min" else max(values[: stop_step // 10])
    assert result.state.best == {"val_loss": best}


def test_run_without_improvement_stall_reaches_max_steps() -> None:
    es = EarlyStopping(monitor="loss", patience=2)
    loop = toy_loop(max_steps=60, log_every_n_steps=10, callbacks=[es])
    program = ToyProgram(loss_at=lambda s, p, b: 100.0 - s)  # always improving
    result = run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=7)
    assert result.final_step == 60 and result.stop_reason is None and es.stopped_at is None
