"""Core's schedule dicts become per-step learning rates with optax's formulas.

``schedule_fn`` is checked at known points of each schedule, and a real run reports,
at every log step, the rate its optimiser used for that step (``state.metrics["lr"]``).
"""

from __future__ import annotations

import math

import pytest
from _lightning_helpers import loop

from pipekit_train import Callback
from pipekit_train.adapters.lightning._optim import schedule_fn
from pipekit_train.optimizers import parse_optimizer_config


def _fn(lr: dict, max_steps: int = 100):
    return schedule_fn(parse_optimizer_config({"name": "adam", "lr": lr}, max_steps=max_steps).lr)


def test_known_points_of_each_schedule() -> None:
    f = _fn({"schedule": "cosine_decay", "init_value": 1.0, "alpha": 0.1})
    assert f(0) == 1.0 and f(100) == pytest.approx(0.1) and f(200) == pytest.approx(0.1)
    assert f(50) == pytest.approx(0.1 + 0.9 * 0.5)
    f = _fn(
        {
            "schedule": "warmup_cosine_decay",
            "init_value": 0.0,
            "peak_value": 1.0,
            "warmup_steps": 10,
            "end_value": 0.0,
        }
    )
    assert f(0) == 0.0 and f(5) == pytest.approx(0.5) and f(10) == pytest.approx(1.0)
    assert f(55) == pytest.approx(0.5) and f(100) == pytest.approx(0.0, abs=1e-12)
    f = _fn(
        {
            "schedule": "exponential_decay",
            "init_value": 1.0,
            "transition_steps": 10,
            "decay_rate": 0.5,
            "staircase": True,
        }
    )
    assert f(9) == 1.0 and f(10) == 0.5 and f(25) == 0.25
    f = _fn({"schedule": "linear", "init_value": 1.0, "end_value": 0.0})
    assert f(0) == 1.0 and f(25) == pytest.approx(0.75) and f(150) == 0.0
    f = _fn(
        {
            "schedule": "piecewise_constant",
            "init_value": 1.0,
            "boundaries_and_scales": {10: 0.5, 20: 0.1},
        }
    )
    assert f(9) == 1.0 and f(10) == 0.5 and f(20) == pytest.approx(0.05)
    assert _fn({"schedule": "constant", "value": 0.3})(7) == 0.3


class LR(Callback):
    def __init__(self) -> None:
        self.seen: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        self.seen[state.step] = state.metrics["lr"]


def test_the_run_uses_the_schedule_step_by_step() -> None:
    lr = LR()
    config = {"name": "sgd", "lr": {"schedule": "cosine_decay", "init_value": 0.1}}
    loop(max_steps=8, log_every_n_steps=2, optimizer_config=config, callbacks=[lr]).run()
    expected = {s: 0.1 * 0.5 * (1 + math.cos(math.pi * (s - 1) / 8)) for s in (2, 4, 6, 8)}
    assert lr.seen == pytest.approx(expected)


def test_every_logged_row_has_the_rate_so_plot_draws_an_lr_curve(tmp_path) -> None:
    import json

    from pipekit_train.plot import read_metric_logs

    config = {"name": "sgd", "lr": {"schedule": "cosine_decay", "init_value": 0.1}}
    path = tmp_path / "metrics.jsonl"
    loop(
        max_steps=8,
        log_every_n_steps=2,
        optimizer_config=config,
        metric_writer={"kind": "jsonl", "path": str(path)},
    ).run()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    logged = {r["step"]: r["lr"] for r in rows if "loss" in r}
    expected = {s: 0.1 * 0.5 * (1 + math.cos(math.pi * (s - 1) / 8)) for s in (2, 4, 6, 8)}
    assert logged == pytest.approx(expected)
    assert "lr" in read_metric_logs(tmp_path).series  # what `pipekit-train plot` draws
