"""``primary_only`` callbacks skip non-primary processes (by the attribute, not the class
name), and every callback is reset at the start of a run: a reused loop's second run
does not inherit the first run's ``EarlyStopping`` state."""

from __future__ import annotations

from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import Callback, EarlyStopping
from pipekit_train.engine import CallbackRunner, run_driver


class Dashboard(Callback):
    primary_only = True

    def __init__(self) -> None:
        self.calls = 0

    def on_step_end(self, loop, state):
        self.calls += 1


class Everywhere(Dashboard):
    primary_only = False


def test_primary_only_skips_other_processes():
    dash, every = Dashboard(), Everywhere()
    loop = toy_loop(max_steps=20, callbacks=[dash, every])
    run_driver(loop, ToyProgram(), 0.0, data=ToyData(), checkpointer=None, is_primary=False)
    assert dash.calls == 0 and every.calls == 2
    assert [type(c) for c in CallbackRunner(loop, is_primary=False)] == [Everywhere]
    assert [type(c) for c in CallbackRunner(loop, is_primary=True)] == [Dashboard, Everywhere]


def test_a_reused_loop_starts_each_run_fresh():
    # the monitored loss improves for 50 steps, then stalls: the first run stops early
    losses = iter([1.0 / s if s <= 50 else 1.0 for s in range(1, 201)])
    stop = EarlyStopping(monitor="loss", patience=2)
    loop = toy_loop(max_steps=100, log_every_n_steps=10, callbacks=[stop])
    first = run_driver(
        loop,
        ToyProgram(loss_at=lambda s, p, b: next(losses)),
        0.0,
        data=ToyData(),
        checkpointer=None,
    )
    assert first.final_step == 70 and stop.stopped_at == 70

    # a second run of the same loop and callback object, with an always-improving loss
    second = run_driver(
        loop, ToyProgram(loss_at=lambda s, p, b: 1.0 / s), 0.0, data=ToyData(), checkpointer=None
    )
    assert second.final_step == 100 and stop.stopped_at is None
