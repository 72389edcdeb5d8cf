"""Callbacks see every step once, even when 7 steps are fused per call; EarlyStopping stops."""

from __future__ import annotations

from _eqx_helpers import make_data, read_jsonl, run_loop, tiny_loop

from pipekit_train import Callback, EarlyStopping

VAL = make_data(16, seed=1)


class Recorder(Callback):
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.window_steps: list[int] = []
        self.window_sizes: list[int] = []
        self.event_steps: list[int] = []
        self.eval_steps: list[int] = []
        self.end_info = None

    def on_run_start(self, loop, state):
        self.calls.append("start")

    def on_step_end(self, loop, state):
        self.calls.append("step")
        self.event_steps.append(state.step)
        self.window_steps.extend(state.window_steps)
        assert all(len(v) == len(state.window_steps) for v in state.window.values())
        self.window_sizes.append(len(state.window_steps))

    def on_eval_end(self, loop, state, metrics):
        self.calls.append("eval")
        self.eval_steps.append(state.step)

    def on_run_end(self, loop, state, info):
        self.calls.append("end")
        self.end_info = dict(info)


def test_every_step_is_seen_exactly_once_with_k7():
    rec = Recorder()
    _, info = run_loop(
        tiny_loop(
            max_steps=40,
            log_every_n_steps=10,
            callbacks=[rec],
            backend_options={"steps_per_call": 7},
        )
    )
    assert rec.window_steps == list(range(1, 41))
    assert rec.event_steps == [10, 20, 30, 40]  # host events only at the cadence
    assert max(rec.window_sizes) == 10  # windows span several fused calls (7 + 3)
    assert rec.calls[0] == "start" and rec.calls[-1] == "end"
    assert rec.end_info["final_step"] == 40 and info["final_step"] == 40


def test_early_stopping_on_val_loss_stops_the_run(tmp_path):
    # min_delta so large that no evaluation counts as an improvement after the first:
    # evals at 5 (best), 10 (wait 1), 15 (wait 2 = patience) → stop at 15 of 50.
    stopper = EarlyStopping(monitor="val_loss", patience=2, min_delta=1e6)
    rec = Recorder()
    path = tmp_path / "m.jsonl"
    _, info = run_loop(
        tiny_loop(
            val_dataset=VAL,
            max_steps=50,
            eval_every_n_steps=5,
            log_every_n_steps=5,
            callbacks=[stopper, rec],
            metric_writer=f"jsonl:{path}",
            backend_options={"steps_per_call": 7},
        )
    )
    assert info["final_step"] == 15
    assert stopper.stopped_at == 15
    assert "EarlyStopping" in info["stop_reason"] and "val_loss" in info["stop_reason"]
    assert rec.eval_steps == [5, 10, 15]
    assert rec.window_steps == list(range(1, 16))
    assert rec.calls[-1] == "end"
    assert max(r["step"] for r in read_jsonl(path)) == 15


def test_early_stopping_that_never_triggers_runs_to_max_steps():
    stopper = EarlyStopping(monitor="val_loss", patience=100)
    _, info = run_loop(
        tiny_loop(val_dataset=VAL, max_steps=10, eval_every_n_steps=5, callbacks=[stopper])
    )
    assert info["final_step"] == 10 and info["stop_reason"] is None
