"""Pipekit callbacks, writers and evaluation run at their exact steps inside Keras' `fit`.

The order at an event is the driver's: ``on_step_end`` (metric writer first) →
evaluation → ``on_eval_end`` → checkpoint → ``on_checkpoint``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import (
    Callback,
    Checkpoint,
    EarlyStopping,
    ProgressBar,
    TerminateOnNaN,
    TrainingLoop,
)
from pipekit_train.errors import TrainingError


class Trace(Callback):
    def __init__(self, every_n_steps: int | None = None) -> None:
        self.every_n_steps = every_n_steps
        self.events: list[tuple[str, int]] = []

    def on_run_start(self, loop, state) -> None:
        self.events.append(("start", state.step))

    def on_step_end(self, loop, state) -> None:
        self.events.append(("step", state.step))

    def on_eval_end(self, loop, state, metrics) -> None:
        assert set(metrics) == {"val_loss", "val_accuracy"}
        self.events.append(("eval", state.step))

    def on_checkpoint(self, loop, state, step) -> None:
        self.events.append(("ckpt", step))

    def on_run_end(self, loop, state, info) -> None:
        self.events.append(("end", state.step))


def _loop(**overrides) -> TrainingLoop:
    fields = dict(
        model_op=mlp(),
        dataset=digits(400),
        val_dataset=digits(150, offset=1500),
        loss="cross_entropy",
        batch_size=32,
        max_steps=30,
        backend="keras",
    )
    fields.update(overrides)
    return TrainingLoop(**fields)


def test_events_happen_at_their_exact_steps_in_the_driver_order(tmp_path: Path) -> None:
    trace = Trace(every_n_steps=7)
    _loop(
        log_every_n_steps=10,
        eval_every_n_steps=15,
        checkpoint_dir=str(tmp_path / "ckpt"),
        callbacks=[Checkpoint(every_n_steps=12, keep_last=None), trace, ProgressBar(leave=False)],
        metric_writer=f"jsonl:{tmp_path / 'm.jsonl'}",
    ).run()
    steps = [s for kind, s in trace.events if kind == "step"]
    assert steps == [7, 10, 12, 14, 15, 20, 21, 24, 28, 30]
    assert [s for k, s in trace.events if k == "eval"] == [15, 30]
    assert [s for k, s in trace.events if k == "ckpt"] == [12, 24, 30]
    assert trace.events[0] == ("start", 0) and trace.events[-1] == ("end", 30)
    at_30 = [k for k, s in trace.events if s == 30]
    assert at_30 == ["step", "eval", "ckpt", "end"]
    assert sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit()) == [
        12,
        24,
        30,
    ]
    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    train_steps = [r["step"] for r in rows if "loss" in r]
    assert train_steps == [10, 20, 30]
    evals = [r for r in rows if "val_loss" in r]
    assert [r["step"] for r in evals] == [15, 30] and 0 <= evals[-1]["val_accuracy"] <= 1


def test_early_stopping_on_val_loss_stops_and_checkpoints(tmp_path: Path) -> None:
    stop = EarlyStopping(monitor="val_loss", patience=0, mode="max")  # stops at the 2nd eval
    op, info = _loop(
        max_steps=100,
        eval_every_n_steps=10,
        checkpoint_dir=str(tmp_path / "ckpt"),
        callbacks=[stop],
    ).run()
    assert info["final_step"] == 20 and stop.stopped_at == 20
    assert "EarlyStopping" in info["stop_reason"]
    assert int(np.asarray(op.model.optimizer.iterations.value)) == 20
    assert (tmp_path / "ckpt" / "20").is_dir()


def test_early_stopping_state_survives_a_resume(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ckpt")
    first = EarlyStopping(monitor="val_loss", patience=5)
    _loop(max_steps=20, eval_every_n_steps=10, checkpoint_dir=ckpt, callbacks=[first]).run()
    second = EarlyStopping(monitor="val_loss", patience=5)
    _, info = _loop(max_steps=30, eval_every_n_steps=10, checkpoint_dir=ckpt, callbacks=[second])\
        .run()  # fmt: skip
    assert info["resumed_from_step"] == 20
    assert second.state_dict()["best"] is not None
    assert second.state_dict()["best"] <= first.state_dict()["best"]


class Records:
    """A per-record dataset (arrays with NaN are refused up front; records are not scanned)."""

    def __init__(self, data: dict, bad: set[int]) -> None:
        self.data, self.bad = data, bad

    def __len__(self) -> int:
        return len(self.data["y"])

    def __getitem__(self, i: int) -> dict:
        x = self.data["x"][i].copy()
        if i in self.bad:
            x[:] = np.nan
        return {"x": x, "y": self.data["y"][i]}


def test_terminate_on_nan_names_the_first_bad_step_and_writes_no_checkpoint(
    tmp_path: Path,
) -> None:
    from pipekit_train.engine import BatchSource

    data = digits(400)
    order = BatchSource(data, 32, 0)
    bad = {int(order.global_indices(6)[0])}  # one NaN row in the 7th batch: step 7
    first_bad = 1 + min(i for i in range(12) if bad & set(order.global_indices(i).tolist()))
    assert first_bad == 7
    ckpt = tmp_path / "ckpt"
    with pytest.raises(TrainingError, match="at step 7;"):
        _loop(
            dataset=Records(data, bad),
            val_dataset=None,
            log_every_n_steps=5,
            checkpoint_dir=str(ckpt),
            callbacks=[Checkpoint(every_n_steps=5), TerminateOnNaN()],
        ).run()
    # the checkpoint of step 5 (before the NaN) stays; nothing of the bad state is written
    assert sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) == [5]
