"""Resume: when the checkpointer restores a saved (step, state, meta), the driver starts at
that step with the saved carry and data position, restores callback state (EarlyStopping's
best / wait) and the last metrics, reports `resumed_from_step`, and finishes with exactly
the results of an uninterrupted run."""

from __future__ import annotations

from typing import Any

import pytest
from _core_toy_backend import (
    Recorder,
    RecordingCheckpointer,
    RecordingWriter,
    ToyData,
    ToyProgram,
    toy_loop,
)

from pipekit_train import Callback, Checkpoint, EarlyStopping, ProgressBar
from pipekit_train.engine import run_driver

MAX_STEPS = 100


class SnapshotEarlyStopping(Callback):
    """Records EarlyStopping's state as on_run_start sees it (after the restore)."""

    def __init__(self, es: EarlyStopping) -> None:
        self.es = es
        self.at_start: dict[str, Any] | None = None

    def on_run_start(self, loop: Any, state: Any) -> None:
        self.at_start = self.es.state_dict()


def _loop(tmp_path, es: EarlyStopping, recorder: Recorder, *extra: Callback, **kw: Any):
    return toy_loop(
        max_steps=MAX_STEPS,
        log_every_n_steps=10,
        callbacks=[*extra, es, SnapshotEarlyStopping(es), Checkpoint(every_n_steps=40), recorder],
        checkpoint_dir=str(tmp_path),
        **kw,
    )


def _first_run(tmp_path):
    # The loss rises after step 30 so EarlyStopping has a non-trivial best and wait when
    # the step-40 checkpoint is taken; patience is large enough never to stop.
    es = EarlyStopping(monitor="loss", patience=50)
    recorder = Recorder("rec", [])
    loop = _loop(tmp_path, es, recorder, metric_writer=RecordingWriter())
    ckpt = RecordingCheckpointer()
    result = run_driver(loop, _program(), 0.5, data=ToyData(), checkpointer=ckpt, steps_per_call=1)
    return result, ckpt, recorder


def _program() -> ToyProgram:
    return ToyProgram(loss_at=lambda s, p, b: abs(s - 30) + (p - b) ** 2)


def test_fresh_run_reports_no_resume(tmp_path) -> None:
    result, ckpt, _ = _first_run(tmp_path)
    assert result.resumed_from_step is None
    assert ckpt.restore_calls == 1
    assert ckpt.saved_steps == [40, 80, 100]


@pytest.mark.parametrize("steps_per_call", [1, 7, 50])
@pytest.mark.parametrize("is_primary", [True, False], ids=["primary", "non-primary"])
def test_resume_from_step_40_continues_bit_identically(
    steps_per_call: int, is_primary: bool, tmp_path
) -> None:
    full, ckpt1, rec1 = _first_run(tmp_path)
    saved_40 = ckpt1.saves[0]
    assert saved_40.step == 40 and saved_40.data_state == {"position": 40}
    es_state_40 = saved_40.meta["callbacks"][0]
    assert es_state_40["wait"] == 1 and isinstance(es_state_40["best"], float)

    # Second process: fresh objects, no metric writer this time, a progress bar added at
    # the front (callback state must still land on the right callbacks).
    es = EarlyStopping(monitor="loss", patience=50)
    recorder = Recorder("rec", [])
    loop = _loop(tmp_path, es, recorder)
    snapshot = loop.callbacks[1]
    assert isinstance(snapshot, SnapshotEarlyStopping)
    data = ToyData()
    program = _program()
    ckpt2 = RecordingCheckpointer(restore_from=saved_40)
    result = run_driver(
        loop,
        program,
        0.5,  # the fresh initial carry, replaced by the restored one
        data=data,
        checkpointer=ckpt2,
        steps_per_call=steps_per_call,
        is_primary=is_primary,
    )

    assert result.resumed_from_step == 40
    assert result.final_step == MAX_STEPS and result.steps_run == MAX_STEPS - 40
    assert recorder.run_start_step == 40
    assert recorder.run_start_metrics == saved_40.meta["metrics"]
    assert snapshot.at_start == es_state_40  # EarlyStopping best/wait restored
    assert program.calls[0][0] == 40  # training continued after step 40 …
    assert data.chunks and sum(data.chunks) == 60  # … from data position 40
    assert result.carry == full.carry  # bit-identical final parameter
    assert recorder.history == rec1.history[40:]  # the same per-step losses
    assert ckpt2.saved_steps == [80, 100]
    assert [s.state for s in ckpt2.saves] == [s.state for s in ckpt1.saves[1:]]
    assert es.state_dict() == full_es_state(ckpt1)
    assert result.state.best == {"loss": es.state_dict()["best"]}


def full_es_state(ckpt: RecordingCheckpointer) -> dict[str, Any]:
    return ckpt.saves[-1].meta["callbacks"][0]


def test_callback_state_is_keyed_to_loop_callbacks_not_the_writer(tmp_path) -> None:
    """The metric writer (wrapped as the first driver callback) takes no slot in the
    saved callback list: slot i belongs to TrainingLoop.callbacks[i]."""
    _, ckpt, _ = _first_run(tmp_path)
    meta = ckpt.saves[0].meta
    assert len(meta["callbacks"]) == 4  # es, snapshot, Checkpoint, recorder
    assert set(meta["callbacks"][0]) == {"best", "wait"}
    assert meta["step"] == 40
    assert set(meta) >= {"step", "fingerprint", "metrics", "best", "callbacks"}


def test_progress_bar_on_a_non_primary_process_is_dropped(tmp_path, capsys) -> None:
    es = EarlyStopping(monitor="loss", patience=50)
    loop = _loop(tmp_path, es, Recorder("rec", []), ProgressBar())
    run_driver(loop, _program(), 0.5, data=ToyData(), checkpointer=None, is_primary=False)
    assert "train[" not in capsys.readouterr().err


def test_resume_at_max_steps_runs_no_step(tmp_path) -> None:
    _, ckpt1, _ = _first_run(tmp_path)
    last = ckpt1.saves[-1]
    program = _program()
    es = EarlyStopping(monitor="loss", patience=50)
    result = run_driver(
        _loop(tmp_path, es, Recorder("rec", [])),
        program,
        0.5,
        data=ToyData(),
        checkpointer=RecordingCheckpointer(restore_from=last),
    )
    assert result.resumed_from_step == MAX_STEPS == result.final_step
    assert program.calls == [] and result.steps_run == 0
    assert result.carry == last.state["param"]


def test_fingerprint_is_written_into_every_checkpoint(tmp_path) -> None:
    ckpt = RecordingCheckpointer()
    run_driver(
        toy_loop(max_steps=20, checkpoint_dir=str(tmp_path), callbacks=[Checkpoint(10)]),
        ToyProgram(),
        0.0,
        data=ToyData(),
        checkpointer=ckpt,
        fingerprint={"batch_size": 32, "seed": 0},
    )
    assert [s.meta["fingerprint"] for s in ckpt.saves] == [{"batch_size": 32, "seed": 0}] * 2
