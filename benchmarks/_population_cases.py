"""Case 17: a population of 16 Equinox trials vmapped into one program vs the 16 run in turn.

The same 16 trials (AdamW learning rates log-spaced 1e-4 … 1e-1, one seed, so the members
share the batches) of one loop on digits (batch 128, K = 50, log every 50, no
checkpoint): ``run_population(loop, members)`` against ``member_loop(loop, m).run()`` for
each member, back to back, interleaved per round (order rotating). Whole calls are timed
(what a sweep pays: set-up, compilation — from a persistent compilation cache warmed
before the first round, as a sweep's second trial finds it —, training, the ops and
reports); ``train_seconds`` (the driver's training loop) is kept in the raw data too.
18a: the small MLP 64-32-10 (2,410 parameters, 600 steps per trial), 18b: the digits MLP
64-256-256-10 (85,002 parameters, 1,000 steps: long enough that the solo runs' start-up does
not decide). ``population_pays`` states its verdict for each; the measurement checks it.
"""

from __future__ import annotations

import dataclasses
import shutil
import sys
import tempfile
import time
from typing import Any

import equinox as eqx
import jax
import numpy as np
from _cases import Row, Settings
from _common import BATCH, median, paired_ratio

from pipekit_train import TrainingLoop
from pipekit_train.adapters.equinox import member_loop, population_pays, run_population

SIZE = 16
SHAPES = {"18a": (32, 1, 600), "18b": (256, 2, 1000)}  # width, depth, steps per trial


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _loop(data: dict[str, np.ndarray], width: int, depth: int, steps: int, cache: str) -> Any:
    return TrainingLoop(
        model_op=eqx.nn.MLP(64, 10, width, depth, key=jax.random.PRNGKey(0)),
        dataset=data,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=steps,
        optimizer_config={"name": "adamw", "lr": 1e-3},
        log_every_n_steps=50,
        backend="equinox",
        backend_options={"steps_per_call": 50, "compilation_cache": cache},
    )


def _population(loop: Any, members: list[dict[str, Any]]) -> tuple[float, float]:
    t0 = time.perf_counter()
    out = run_population(loop, members)
    return time.perf_counter() - t0, float(out[0][1]["train_seconds"])


def _sequential(loop: Any, members: list[dict[str, Any]]) -> tuple[float, float]:
    t0 = time.perf_counter()
    train = 0.0
    for member in members:
        train += float(member_loop(loop, member).run()[1]["train_seconds"])
    return time.perf_counter() - t0, train


def case_population(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """18a / 18b: population of 16 ÷ 16 sequential trials, whole calls, interleaved."""
    members = [{"optimizer_config.lr": float(lr)} for lr in np.logspace(-4, -1, SIZE)]
    rows = []
    cache = tempfile.mkdtemp(prefix="pipekit-bench-population-")
    try:
        for case, (width, depth, steps) in SHAPES.items():
            loop = _loop(data, width, depth, steps, cache)
            choice = population_pays(loop, SIZE)
            # Warm the persistent cache with the same programs (the 50-step scan of N = 16
            # and of one member; max_steps is not in them) and the imports.
            short = dataclasses.replace(loop, max_steps=50)
            _population(short, members)
            _sequential(short, members[:1])
            pop: list[tuple[float, float]] = []
            seq: list[tuple[float, float]] = []
            rounds = max(2, min(s.repeats, 3))
            for r in range(rounds):
                order = [("pop", _population), ("seq", _sequential)]
                for name, fn in order[r % 2 :] + order[: r % 2]:
                    (pop if name == "pop" else seq).append(fn(loop, members))
                _say(
                    f"  {case} round {r + 1}: population {pop[-1][0]:.2f} s, "
                    f"sequential {seq[-1][0]:.2f} s"
                )
            ratio = paired_ratio([t for t, _ in seq], [t for t, _ in pop])
            train_ratio = paired_ratio([t for _, t in seq], [t for _, t in pop])
            target = "≥ 2" if case == "18a" else "reported"
            rows.append(
                Row(
                    case,
                    f"population of {SIZE} (MLP 64-{'-'.join([str(width)] * depth)}-10, "
                    f"{steps} steps each) vs {SIZE} sequential trials; rule says "
                    f"{'population' if choice else 'sequential'}",
                    f"{median([t for t, _ in pop]):.2f} s",
                    f"{median([t for t, _ in seq]):.2f} s",
                    f"{ratio:.2f}",
                    target,
                    (ratio >= 2.0) if case == "18a" else None,
                    {
                        "population_seconds": [t for t, _ in pop],
                        "sequential_seconds": [t for t, _ in seq],
                        "population_train_seconds": [t for _, t in pop],
                        "sequential_train_seconds": [t for _, t in seq],
                        "train_seconds_ratio": train_ratio,
                        "rule": choice.as_dict(),
                        "rule_agrees": bool(choice) == (ratio > 1.0),
                    },
                )
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return rows
