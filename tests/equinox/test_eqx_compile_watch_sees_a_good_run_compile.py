"""Positive control for the "raised before compilation" tests.

Those tests assert that ``watch_compilation`` saw nothing. This proves each of
its signals does fire when a valid loop trains, so a silent watch means
something.
"""

from __future__ import annotations

from _eqx_helpers import make_data, run_loop, tiny_loop, watch_compilation


def test_every_signal_fires_on_a_good_run(monkeypatch):
    with watch_compilation(monkeypatch) as watch:
        run_loop(
            tiny_loop(
                max_steps=4,
                log_every_n_steps=2,
                val_dataset=make_data(16),
                backend_options={"steps_per_call": 2},
            )
        )
    assert watch.train_calls >= 2
    assert watch.step_traces >= 1
    assert watch.training_compiles, watch.compiled
    assert watch.anything
