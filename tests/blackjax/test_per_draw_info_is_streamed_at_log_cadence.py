"""Per-draw sampler information (acceptance, divergence, energy, step size, tree depth) reaches
the callbacks and the metric writer at the log cadence, one entry per step, per chain; for
MCLMC its own (L, step size, energy change)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
from _bjx_helpers import gauss_task, loop_for

from pipekit_train import Callback


class Windows(Callback):
    def __init__(self) -> None:
        self.seen: list[tuple[int, str, dict]] = []

    def on_step_end(self, loop, state) -> None:
        self.seen.append((state.step, state.phase, {k: list(v) for k, v in state.window.items()}))


def _run(sampler: str, tmp: Path) -> tuple[Windows, dict]:
    rec = Windows()
    loop = loop_for(
        gauss_task(num_warmup=20, num_samples=20, num_chains=2),
        sampler,
        options={"steps_per_call": 10},
        log_every_n_steps=5,
        callbacks=[rec],
        metric_writer=f"jsonl:{tmp / sampler}.jsonl",
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = loop.run()
    return rec, info


def test_nuts_streams_its_transition_info(tmp_path: Path) -> None:
    rec, info = _run("nuts", tmp_path)
    assert [s for s, _, _ in rec.seen] == [5, 10, 15, 20, 25, 30, 35, 40]
    assert {p for _, p, _ in rec.seen} == {"warmup", "sampling"}
    names = {
        "acceptance_rate",
        "diverging",
        "energy",
        "step_size",
        "num_integration_steps",
        "tree_depth",
    }
    for _, _, window in rec.seen:
        assert set(window) == names
        for values in window.values():
            assert len(values) == 5 and np.shape(values[0]) == (2,)  # five steps, two chains
    rows = [
        json.loads(line) for p in tmp_path.rglob("*.jsonl") for line in p.read_text().splitlines()
    ]
    assert any("acceptance_rate" in json.dumps(r) for r in rows)
    # Sampling uses the adapted step size, the same at every draw.
    last = rec.seen[-1][2]["step_size"]
    assert all(np.array_equal(last[0], s) for s in last)


def test_mclmc_streams_its_own_info(tmp_path: Path) -> None:
    rec, info = _run("mclmc", tmp_path)
    assert info["phases"] == {"pathfinder": 1, "warmup": 1, "sampling": 20}
    assert set(rec.seen[-1][2]) == {
        "energy_change",
        "energy_error",
        "logdensity",
        "step_size",
        "L",
        "steps_per_draw",
    }
