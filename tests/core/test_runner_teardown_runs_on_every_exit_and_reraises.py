"""Teardown runs on every exit path and the run's own error surfaces unchanged.

A callback that raises mid-run, and a step program that raises mid-run: each
callback's ``on_exception`` runs (the progress bar closes, the writer flushes and
closes), ``on_run_end`` does not, and the original exception object is re-raised.
"""

from __future__ import annotations

import io

import pytest
from _core_toy_backend import RecordingWriter, ToyData, ToyProgram, toy_loop

from pipekit_train import Callback, LogToExperiment, ProgressBar
from pipekit_train.engine import run_driver


class Boom(RuntimeError):
    pass


class Hooks(Callback):
    def __init__(self, raise_at: int | None = None) -> None:
        self.raise_at = raise_at
        self.ended = False
        self.errors: list[BaseException] = []

    def on_step_end(self, loop, state):
        if state.step == self.raise_at:
            raise Boom(f"callback failed at {state.step}")

    def on_run_end(self, loop, state, info):
        self.ended = True

    def on_exception(self, loop, state, error):
        self.errors.append(error)


def _run(program, hooks, writer, bar):
    # the loop's metric_writer is the runner's to close; the user's own LogToExperiment
    # writer is the user's (flushed, not closed)
    own = RecordingWriter()
    loop = toy_loop(
        max_steps=40, metric_writer=writer, callbacks=[LogToExperiment(own), bar, hooks]
    )
    hooks.own = own
    return run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None, steps_per_call=4)


@pytest.mark.parametrize("where", ["callback", "step"])
def test_teardown_and_the_same_error(where):
    writer, bar = RecordingWriter(), ProgressBar(file=io.StringIO())
    hooks = Hooks(raise_at=20 if where == "callback" else None)
    error = Boom("step failed")

    def on_step(s):
        if where == "step" and s == 23:
            raise error

    with pytest.raises(Boom) as info:
        _run(ToyProgram(on_step=on_step), hooks, writer, bar)
    if where == "step":
        assert info.value is error  # re-raised unchanged
    assert hooks.errors == [info.value]
    assert not hooks.ended
    assert writer.closed and writer.flushes >= 1
    assert hooks.own.flushes >= 1 and not hooks.own.closed
    assert bar._bar is None  # the bar was closed


def test_a_failing_teardown_does_not_mask_the_error():
    class BadTeardown(Callback):
        def on_exception(self, loop, state, error):
            raise ValueError("teardown broke")

    hooks = Hooks(raise_at=10)
    with pytest.warns(UserWarning, match="teardown broke"), pytest.raises(Boom):
        loop = toy_loop(max_steps=40, callbacks=[BadTeardown(), hooks])
        run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None)
    assert len(hooks.errors) == 1
