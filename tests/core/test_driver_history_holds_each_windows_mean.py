"""``DriverResult.history`` holds each training metric's mean over each host event's window,
as ``(step, mean)`` pairs, whatever ``steps_per_call`` is: what a convergence check reads
(numpyro-svi's ELBO check), like Keras's ``History``; a long run's history stays bounded,
neighbouring windows merged in pairs."""

from __future__ import annotations

import math

import pytest
from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train.engine import run_driver


def _loss(step: int, param: float, batch: float) -> float:
    return float(step) ** 2


@pytest.mark.parametrize("steps_per_call", [1, 4])
def test_history_is_each_windows_mean_at_its_event(steps_per_call: int) -> None:
    loop = toy_loop(max_steps=30, log_every_n_steps=10)
    result = run_driver(
        loop,
        ToyProgram(loss_at=_loss),
        0.0,
        data=ToyData(),
        checkpointer=None,
        steps_per_call=steps_per_call,
    )
    history = result.history["loss"]
    assert [s for s, _ in history] == [10, 20, 30]
    steps = [range(1, 11), range(11, 21), range(21, 31)]
    means = [math.fsum(s**2 for s in r) / len(r) for r in steps]
    assert [m for _, m in history] == pytest.approx(means)


def test_a_long_history_is_merged_in_pairs_and_stays_bounded(monkeypatch) -> None:
    from pipekit_train.engine import _driver

    monkeypatch.setattr(_driver, "HISTORY_MAX", 8)
    loop = toy_loop(max_steps=90, log_every_n_steps=10)
    result = run_driver(
        loop, ToyProgram(loss_at=_loss), 0.0, data=ToyData(), checkpointer=None, steps_per_call=5
    )
    history = result.history["loss"]
    assert len(history) <= 8 and history[-1][0] == 90
    windows = [math.fsum(s**2 for s in range(a, a + 10)) / 10 for a in range(1, 91, 10)]
    # Nine windows: the ninth made it 9 > 8, so windows 1-8 merged in pairs, the ninth kept.
    merged = [(windows[i] + windows[i + 1]) / 2 for i in range(0, 8, 2)] + [windows[8]]
    assert [m for _, m in history] == pytest.approx(merged)
    assert [s for s, _ in history] == [20, 40, 60, 80, 90]
