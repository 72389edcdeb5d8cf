"""Pipekit callbacks through the bridge: every step in ``state.window``, the driver's order,
``EarlyStopping`` stops the Trainer (with a checkpoint), ``TerminateOnNaN`` names the step."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from _lightning_helpers import data, loop, mlp

from pipekit_train import Callback, EarlyStopping, TerminateOnNaN
from pipekit_train.errors import TrainingError


class Trace(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.events: list[tuple[str, int]] = []

    def on_run_start(self, loop, state) -> None:
        self.events.append(("run_start", state.step))

    def on_step_end(self, loop, state) -> None:
        assert len(state.window["loss"]) == len(state.window_steps)
        self.steps += state.window_steps
        self.events.append(("step_end", state.step))

    def on_eval_end(self, loop, state, metrics) -> None:
        assert set(metrics) == {"val_loss", "val_accuracy"}
        self.events.append(("eval_end", state.step))

    def on_checkpoint(self, loop, state, step) -> None:
        self.events.append(("checkpoint", step))

    def on_run_end(self, loop, state, info) -> None:
        self.events.append(("run_end", state.step))


def test_every_step_once_in_order_with_eval_and_checkpoints(tmp_path: Path) -> None:
    trace = Trace()
    _, info = loop(
        max_steps=12,
        log_every_n_steps=4,
        eval_every_n_steps=6,
        val_dataset=data(seed=1),
        checkpoint_dir=str(tmp_path),
        callbacks=[trace],
    ).run()
    assert trace.steps == list(range(1, 13))
    assert trace.events == [
        ("run_start", 0),
        ("step_end", 4),
        ("step_end", 6),
        ("eval_end", 6),
        ("step_end", 8),
        ("step_end", 12),
        ("eval_end", 12),
        ("checkpoint", 12),
        ("run_end", 12),
    ]
    assert {"loss", "lr", "val_loss", "val_accuracy"} <= set(info["final_metrics"])


def test_early_stopping_stops_the_trainer_and_checkpoints(tmp_path: Path) -> None:
    stop = EarlyStopping(monitor="loss", patience=0, min_delta=1e9)
    _, info = loop(
        max_steps=40, log_every_n_steps=2, checkpoint_dir=str(tmp_path), callbacks=[stop]
    ).run()
    assert info["final_step"] == 4  # step 2 sets the best, step 4 fails to beat it by 1e9
    assert "EarlyStopping" in info["stop_reason"]
    assert (tmp_path / "step-000000004.pt").exists()


def test_terminate_on_nan_names_the_step_and_writes_no_bad_checkpoint(tmp_path: Path) -> None:
    # The data is finite (non-finite data is refused before training); the model's weights
    # make every output NaN, so the first step's loss is NaN.
    net = mlp()
    with torch.no_grad():
        net[0].weight.fill_(float("nan"))
    with pytest.raises(TrainingError, match="step 1"):
        loop(
            model_op=net,
            checkpoint_dir=str(tmp_path),
            log_every_n_steps=3,
            callbacks=[TerminateOnNaN()],
        ).run()
    assert not list(tmp_path.glob("step-*.pt"))
