"""SIGTERM during training makes the driver checkpoint at the next chunk boundary and return
normally with `interrupted == "SIGTERM"`; the previous SIGTERM handler is restored."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from typing import Any

import pytest
from _core_toy_backend import Recorder, RecordingCheckpointer, ToyData, ToyProgram, toy_loop

from pipekit_train import Callback, Checkpoint
from pipekit_train.engine import run_driver


@pytest.fixture
def outer_handler() -> Iterator[list[int]]:
    """A harmless SIGTERM handler around the test, so a driver bug cannot kill pytest."""
    received: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        received.append(signum)

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)


class SigtermAt(Callback):
    """Sends SIGTERM to this very process from inside on_step_end at step ``at``."""

    def __init__(self, at: int) -> None:
        self.at = at

    def on_step_end(self, loop: Any, state: Any) -> None:
        if state.step == self.at:
            os.kill(os.getpid(), signal.SIGTERM)


@pytest.mark.parametrize("steps_per_call", [1, 7])
def test_sigterm_from_a_callback_checkpoints_that_boundary_and_returns(
    steps_per_call: int, tmp_path, outer_handler: list[int]
) -> None:
    recorder = Recorder("rec", [])
    loop = toy_loop(
        max_steps=1000,
        log_every_n_steps=10,
        callbacks=[SigtermAt(20), Checkpoint(every_n_steps=500), recorder],
        checkpoint_dir=str(tmp_path),
    )
    program, ckpt = ToyProgram(), RecordingCheckpointer()
    result = run_driver(
        loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=steps_per_call
    )
    assert result.interrupted == "SIGTERM"
    assert result.final_step == 20
    assert result.stop_reason is not None and "SIGTERM" in result.stop_reason
    assert ckpt.saved_steps == [20]
    assert ckpt.saves[0].state == {"param": result.carry}
    assert ckpt.saves[0].data_state == {"position": 20}
    assert recorder.steps("checkpoint") == [20]
    assert recorder.steps("run_end") == [20]  # a normal end: on_run_end runs
    assert ckpt.wait_calls >= 1 and ckpt.close_calls == 1
    # The driver's handler caught the signal; ours is back in place and was not called.
    assert outer_handler == []
    # Our handler is back in place (not merely "some handler"): it receives the next SIGTERM.
    os.kill(os.getpid(), signal.SIGTERM)
    assert outer_handler == [signal.SIGTERM]


def test_sigterm_mid_chunk_checkpoints_at_the_end_of_that_chunk(
    tmp_path, outer_handler: list[int]
) -> None:
    def kill_at_12(step: int) -> None:
        if step == 12:
            os.kill(os.getpid(), signal.SIGTERM)

    loop = toy_loop(max_steps=1000, log_every_n_steps=100, checkpoint_dir=str(tmp_path))
    program = ToyProgram(on_step=kill_at_12)
    ckpt = RecordingCheckpointer()
    result = run_driver(loop, program, 0.0, data=ToyData(), checkpointer=ckpt, steps_per_call=5)
    # The chunk 11..15 in flight finishes; the driver stops there, not at step 100.
    assert program.calls == [(0, 5), (5, 5), (10, 5)]
    assert result.final_step == 15 and result.interrupted == "SIGTERM"
    assert ckpt.saved_steps == [15]
    assert outer_handler == []


def test_handler_is_restored_after_a_normal_run(outer_handler: list[int]) -> None:
    before = signal.getsignal(signal.SIGTERM)
    result = run_driver(toy_loop(max_steps=5), ToyProgram(), 0.0, data=ToyData(), checkpointer=None)
    assert result.interrupted is None
    assert signal.getsignal(signal.SIGTERM) is before
    os.kill(os.getpid(), signal.SIGTERM)  # goes to the outer handler again
    assert outer_handler == [signal.SIGTERM]
