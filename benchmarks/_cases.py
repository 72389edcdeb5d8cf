"""The benchmark cases. Each returns ``Row``s; ``run.py`` prints and writes them.

Every speed case interleaves the pipekit path and its reference in this one process
(``repeats`` rounds; the order inside a round rotates) and reports medians plus the
median over rounds of the paired ratio ``reference time / pipekit time`` (> 1: pipekit
is faster).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _common import (
    BATCH,
    OPTIMIZER_CONFIG,
    backend_seconds_per_step,
    hand_seconds_per_step,
    median,
    paired_ratio,
    scan_seconds_per_step,
)

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Row:
    case: str
    what: str
    ours: str
    reference: str
    ratio: str
    target: str
    ok: bool | None  # None: reported, no target
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Settings:
    repeats: int = 5
    window: int = 1000  # timed steps per training measurement
    sweep_repeats: int = 3
    cli_pairs: int = 2
    import_runs: int = 7
    default_k: int = 50


def _rate(seconds_per_step: float) -> str:
    return f"{1.0 / seconds_per_step:,.0f} steps/s"


def _rotate(items: list[Any], r: int) -> list[Any]:
    r %= len(items)
    return items[r:] + items[:r]


def _say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# -- case 12: the step-time cost of each training feature -------------------------------------

FEATURES: dict[str, dict[str, Any]] = {
    "12a": {"accumulate_steps": 4},
    "12b": {"ema_decay": 0.999},
    "12c": {"precision": "mixed-bfloat16"},
    "12d": {"precision": "bfloat16"},
}


def case_feature_costs(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """12a-12d: the backend at the default K with one feature on ÷ the same run without.

    Reported, no target. The ratio is ``plain time / feature time`` per optimiser
    update (< 1: the feature costs). ``accumulate_steps=4`` reads 4 micro-batches of
    128 per update, so its cost per micro-batch is also given.
    """
    w = min(s.window, 500)
    start = 100
    runs: dict[str, Callable[[], float]] = {
        "plain": lambda: (
            backend_seconds_per_step(
                data, steps_per_call=None, start=start, window=w
            ).seconds_per_step
        )
    }
    for case, fields in FEATURES.items():
        runs[case] = lambda fields=fields: (
            backend_seconds_per_step(
                data, steps_per_call=None, start=start, window=w, **fields
            ).seconds_per_step
        )
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    rows = []
    for case, fields in FEATURES.items():
        ratio = paired_ratio(times["plain"], times[case])
        what = ", ".join(f"{k}={v}" for k, v in fields.items())
        extra = ""
        if "accumulate_steps" in fields:
            k = fields["accumulate_steps"]
            per_micro = paired_ratio(times["plain"], [t / k for t in times[case]])
            extra = f" (per micro-batch: {per_micro:.2f})"
        rows.append(
            Row(
                case,
                f"backend K={s.default_k} with {what} ÷ the same run without (per update)",
                _rate(median(times[case])),
                _rate(median(times["plain"])),
                f"{ratio:.2f}{extra}",
                "reported",
                None,
                {"ours_s_per_step": times[case], "reference_s_per_step": times["plain"]},
            )
        )
    return rows


# -- cases 15 and 16: the same feature costs on the keras and lightning backends ---------------

#: Keras: ``precision="bfloat16"`` is not measured — the benchmark's AdamW is refused in
#: bfloat16 on Keras (its beta_2 rounds to 1.0 there and it makes no update).
KERAS_FEATURES: dict[str, dict[str, Any]] = {
    "15a": {"accumulate_steps": 4},
    "15b": {"ema_decay": 0.999},
    "15c": {"precision": "mixed-bfloat16"},
}
LIGHTNING_FEATURES: dict[str, dict[str, Any]] = {
    "16a": {"accumulate_steps": 4},
    "16b": {"ema_decay": 0.999},
    "16c": {"precision": "mixed-bfloat16"},
    "16d": {"precision": "bfloat16"},
}


def _feature_rows(
    label: str,
    features: dict[str, dict[str, Any]],
    measure: Callable[..., float],
    s: Settings,
) -> list[Row]:
    """Interleaved rounds of ``measure(**fields)`` for each feature and for none.

    The ratio is ``plain time / feature time`` per optimiser update (< 1: the feature
    costs); with ``accumulate_steps`` the per-micro-batch ratio is given too.
    """
    runs: dict[str, Callable[[], float]] = {"plain": lambda: measure()}
    for case, fields in features.items():
        runs[case] = lambda fields=fields: measure(**fields)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    rows = []
    for case, fields in features.items():
        ratio = paired_ratio(times["plain"], times[case])
        what = ", ".join(f"{k}={v}" for k, v in fields.items())
        extra = ""
        if "accumulate_steps" in fields:
            k = fields["accumulate_steps"]
            per_micro = paired_ratio(times["plain"], [t / k for t in times[case]])
            extra = f" (per micro-batch: {per_micro:.2f})"
        rows.append(
            Row(
                case,
                f"{label} with {what} ÷ the same run without (per update)",
                _rate(median(times[case])),
                _rate(median(times["plain"])),
                f"{ratio:.2f}{extra}",
                "reported",
                None,
                {"ours_s_per_step": times[case], "reference_s_per_step": times["plain"]},
            )
        )
    return rows


def case_keras_feature_costs(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """15a-15c: the keras backend (log/50, no checkpoint) with one feature on ÷ without."""
    from _keras_ref import keras_backend_seconds_per_step

    start, w = 50, min(s.window, 300)
    return _feature_rows(
        "keras backend, log/50",
        KERAS_FEATURES,
        lambda **f: keras_backend_seconds_per_step(data, start=start, window=w, **f),
        s,
    )


def case_lightning_feature_costs(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """16a-16d: the lightning backend (log/50, no checkpoint) with one feature on ÷ without."""
    import _lightning_ref as ref

    start, w = 50, min(s.window, 300)
    return _feature_rows(
        "lightning backend, log/50",
        LIGHTNING_FEATURES,
        lambda **f: ref.backend_seconds_per_step(data, start, w, **f),
        s,
    )


# -- cases 1-3: the backend against the hand-written loop and Keras ---------------------------


def cases_backend_vs_references(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """1: K=1 ÷ hand loop; 2: default K ÷ hand loop; 3: default K ÷ Keras fit."""
    from _keras_ref import keras_seconds_per_step

    w = s.window
    spe = len(data["x"]) // BATCH
    keras_epochs = 1 + max(1, round(w / spe))
    keras_tile = 8
    keras_epochs_tiled = 1 + max(1, round(w / (spe * keras_tile)))
    start = 550  # after the first checkpoint (step 500) and its one-time set-up
    runs: dict[str, Callable[[], float]] = {
        "hand": lambda: hand_seconds_per_step(data, w),
        "k1": lambda: (
            backend_seconds_per_step(
                data, steps_per_call=1, start=start, window=w, checkpoint_every=500
            ).seconds_per_step
        ),
        "kdef": lambda: (
            backend_seconds_per_step(
                data, steps_per_call=None, start=start, window=w, checkpoint_every=500
            ).seconds_per_step
        ),
        "keras": lambda: keras_seconds_per_step(
            data, steps_per_execution=s.default_k, epochs=keras_epochs
        ),
        "keras_tiled": lambda: keras_seconds_per_step(
            data, steps_per_execution=s.default_k, epochs=keras_epochs_tiled, tile=keras_tile
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    k = s.default_k
    rows = []
    for case, what, ours, ref, target in (
        ("1", "backend K=1, log/50, ckpt/500 ÷ hand `eqx.filter_jit` loop", "k1", "hand", 1.0),
        (
            "2",
            f"backend K={k} (default), log/50, ckpt/500 ÷ hand `eqx.filter_jit` loop",
            "kdef",
            "hand",
            1.7,
        ),
        (
            "3",
            f"backend K={k}, log/50, ckpt/500 ÷ Keras 3 `fit` (JAX), steps_per_execution={k}",
            "kdef",
            "keras",
            1.1,
        ),
        (
            "3b",
            f"as 3, Keras data tiled x{keras_tile} (one epoch = {spe * keras_tile} steps)",
            "kdef",
            "keras_tiled",
            1.1,
        ),
    ):
        ratio = paired_ratio(times[ref], times[ours])
        target_text = f"≥ {target}" + (" (stretch 1.4)" if case == "1" else "")
        rows.append(
            Row(
                case,
                what,
                _rate(median(times[ours])),
                _rate(median(times[ref])),
                f"{ratio:.2f}",
                target_text,
                ratio >= target,
                {"ours_s_per_step": times[ours], "reference_s_per_step": times[ref]},
            )
        )
    return rows


# -- case 8: the backend against a hand-written jit + donation + lax.scan loop ---------------


def case_backend_vs_scan_loop(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """8: backend at the default K, log every 50, no checkpoint ÷ hand-written fused loop.

    The reference is the best a user writes by hand (:class:`_common.ScanLoop`): ``jax.jit``
    with donated buffers over a ``lax.scan`` of K steps, K = the backend's default,
    fetching one loss per chunk. Interleaved paired rounds, as every case.
    """
    w, k = s.window, s.default_k
    start = 100  # two chunks of warm-up: compilation is outside the window
    runs: dict[str, Callable[[], float]] = {
        "scan": lambda: scan_seconds_per_step(data, w, k),
        "kdef": lambda: (
            backend_seconds_per_step(
                data, steps_per_call=None, start=start, window=w, log_every=50
            ).seconds_per_step
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    ratio = paired_ratio(times["scan"], times["kdef"])
    return [
        Row(
            "8",
            f"backend K={k} (default), log/50, no checkpoint ÷ hand `jax.jit` + donation + "
            f"`lax.scan` loop, K={k}",
            _rate(median(times["kdef"])),
            _rate(median(times["scan"])),
            f"{ratio:.2f}",
            "≥ 1.0",
            ratio >= 1.0,
            {"ours_s_per_step": times["kdef"], "reference_s_per_step": times["scan"]},
        )
    ]


# -- case 9: the keras backend against plain Keras fit --------------------------------------


def case_keras_backend(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """9: ``backend="keras"`` (log/50, no checkpoint) ÷ plain ``model.fit`` on the same model.

    Both at Keras' default ``steps_per_execution=1`` (a Python loop over a one-step jitted
    function either way, so larger values buy nothing), the reference on numpy arrays with
    ``shuffle=True``; 9b adds a checkpoint every 500 steps to the backend.
    """
    from _keras_ref import keras_backend_seconds_per_step, keras_seconds_per_step

    w = s.window
    spe = len(data["x"]) // BATCH
    epochs = 1 + max(1, round(w / spe))
    start = 550  # after the first checkpoint (step 500) of 9b and its one-time set-up
    runs: dict[str, Callable[[], float]] = {
        "fit": lambda: keras_seconds_per_step(data, steps_per_execution=1, epochs=epochs),
        "backend": lambda: keras_backend_seconds_per_step(data, start=start, window=w),
        "backend_ckpt": lambda: keras_backend_seconds_per_step(
            data, start=start, window=w, checkpoint_every=500
        ),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    rows = []
    for case, what, ours in (
        ("9", "keras backend, log/50 ÷ plain Keras `fit` (same model and data)", "backend"),
        ("9b", "keras backend, log/50, ckpt/500 ÷ plain Keras `fit`", "backend_ckpt"),
    ):
        ratio = paired_ratio(times["fit"], times[ours])
        rows.append(
            Row(
                case,
                what,
                _rate(median(times[ours])),
                _rate(median(times["fit"])),
                f"{ratio:.2f}",
                "≥ 0.97",
                ratio >= 0.97,
                {"ours_s_per_step": times[ours], "reference_s_per_step": times["fit"]},
            )
        )
    return rows


# -- case 4: the Grain batch path against in-memory slicing, feeding the same step ------------


def _program(data: dict[str, np.ndarray]) -> tuple[Any, Any, Any]:
    """The backend's compiled step (``EquinoxProgram``), built as ``run`` builds it."""
    import jax
    from _common import make_model

    from pipekit_train.adapters.equinox._placement import Placement
    from pipekit_train.adapters.equinox._program import EquinoxProgram
    from pipekit_train.adapters.equinox._state import TrainState
    from pipekit_train.adapters.equinox._task import SupervisedTask
    from pipekit_train.engine import BatchIterator, BatchSource
    from pipekit_train.jax.losses import resolve_loss
    from pipekit_train.jax.optim import resolve_optimizer

    optimizer = resolve_optimizer(OPTIMIZER_CONFIG, max_steps=10**9)
    task = SupervisedTask(
        loss=resolve_loss("cross_entropy", field="loss"), classification="cross_entropy"
    )
    base_key, eval_key = jax.random.split(jax.random.PRNGKey(0))
    program = EquinoxProgram(
        TrainState.create(make_model(), optimizer),
        task,
        optimizer,
        base_key=base_key,
        eval_key=eval_key,
        val_data=None,
        eval_batch_size=BATCH,
        placement=Placement(None),
    )
    source = BatchSource(data, BATCH, 0)
    return program, source, BatchIterator


class _Slices:
    """The reference data path: contiguous slices (views) of batches gathered in advance."""

    def __init__(self, stacked: dict[str, np.ndarray]) -> None:
        self.stacked = stacked
        self.i = 0

    def next_chunk(self, k: int) -> dict[str, np.ndarray]:
        out = {key: a[self.i : self.i + k] for key, a in self.stacked.items()}
        self.i += k
        return out


def case_data_path(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """4: the driver's loop body (``next_chunk`` then ``train_chunk``) with either data path.

    Both paths share one compiled program, so they can be interleaved finely: a round is
    ``window`` steps per path, run as alternating blocks of ``BLOCK`` steps (each ending
    on a device sync), so that a burst of machine load hits both paths alike.
    """
    import jax

    block = 100
    program, source, batch_iterator = _program(data)
    carry = program.initial_carry
    rows = []
    for k in (1, s.default_k):
        per_block = max(1, block // k)  # chunks per block
        blocks = max(1, s.window // (per_block * k))
        steps = blocks * per_block * k  # per path and round
        # The same batches on both sides: the reference holds them pre-gathered.
        stacked = source.get_batches(0, steps)

        def timed(stream: Any, carry: Any, chunks: int, k: int = k) -> tuple[float, Any]:
            start = time.perf_counter()
            metrics = None
            for i in range(chunks):
                carry, metrics, _ = program.train_chunk(carry, stream.next_chunk(k), i * k, k)
            jax.block_until_ready((carry, metrics))
            return time.perf_counter() - start, carry

        _, carry = timed(_Slices(stacked), carry, 1)  # warm-up: compile this chunk size
        times: dict[str, list[float]] = {"grain": [], "slices": []}
        for r in range(s.repeats):
            streams = {"grain": batch_iterator(source), "slices": _Slices(stacked)}
            total = {"grain": 0.0, "slices": 0.0}
            for b in range(blocks):
                for name in _rotate(["grain", "slices"], r + b):
                    elapsed, carry = timed(streams[name], carry, per_block)
                    total[name] += elapsed
            for name in times:
                times[name].append(total[name] / steps)
        ratio = paired_ratio(times["slices"], times["grain"])
        rows.append(
            Row(
                "4" if k == 1 else "4b",
                f"training with Grain `BatchIterator.next_chunk` ÷ in-memory slicing, K={k}",
                _rate(median(times["grain"])),
                _rate(median(times["slices"])),
                f"{ratio:.2f}",
                "≥ 0.95",
                ratio >= 0.95,
                {"ours_s_per_step": times["grain"], "reference_s_per_step": times["slices"]},
            )
        )
        _say(f"  K={k}: ratio {ratio:.3f}")
    return rows


# -- case 5: async checkpoint every 100 and every 500 steps, and at the default cadence -------

#: case id → (checkpoint cadence, target overhead in % of step time; 5's is issue 34's)
CHECKPOINT_CADENCES = {"5": (100, 10.0), "5b": (500, 5.0)}
#: 5c: ``Checkpoint()``'s default cadence (every 500 steps, no more often than 25× a save's
#: whole cost), timed over a window long enough to hold several of its saves.
DEFAULT_CADENCE_TARGET, DEFAULT_CADENCE_WINDOW = 5.0, 10_000


def case_checkpoint_cost(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """5, 5b: backend (default K) with a checkpoint every 100 / 500 steps vs no checkpoint_dir;
    5c: the default cadence vs no checkpoint_dir over a longer window (its own pairs).

    All runs time the same steps (550 … 550 + window), after the first checkpoint's
    one-time set-up; interleaved rounds, the order rotating.
    """
    w = s.window
    start = 550

    def timed(every: int | str | None, window: int = w) -> float:
        return backend_seconds_per_step(
            data, steps_per_call=None, start=start, window=window, checkpoint_every=every
        ).seconds_per_step

    runs: dict[str, Callable[[], float]] = {"none": lambda: timed(None)}
    for case, (every, _) in CHECKPOINT_CADENCES.items():
        runs[case] = lambda every=every: timed(every)
    long_w = max(w, DEFAULT_CADENCE_WINDOW)
    runs["none_long"] = lambda: timed(None, long_w)
    runs["5c"] = lambda: timed("default", long_w)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
    rows = []
    step = median(times["none"])
    for case, (every, target) in CHECKPOINT_CADENCES.items():
        overhead = (1.0 / paired_ratio(times["none"], times[case]) - 1.0) * 100.0
        # The cost of one checkpoint, in ms and in training steps, and the cadence at which
        # it would stay within 5 % of step time (assuming a fixed cost per checkpoint).
        per_save = (median(times[case]) - step) * every
        rows.append(
            Row(
                case,
                f"async Orbax checkpoint every {every} steps (keep_last=2), K={s.default_k}: "
                "step time vs no checkpoint_dir",
                f"{median(times[case]) * 1e3:.3f} ms/step",
                f"{step * 1e3:.3f} ms/step",
                f"{overhead:+.1f} % step time",
                f"≤ +{target:g} %",
                overhead <= target,
                {
                    "ours_s_per_step": times[case],
                    "reference_s_per_step": times["none"],
                    "per_checkpoint_ms": per_save * 1e3,
                    "per_checkpoint_steps": per_save / step,
                    "every_for_5pct": per_save / (0.05 * step),
                },
            )
        )
    overhead = (1.0 / paired_ratio(times["none_long"], times["5c"]) - 1.0) * 100.0
    rows.append(
        Row(
            "5c",
            f"async Orbax checkpoint at `Checkpoint()`'s default cadence (keep_last=2), "
            f"K={s.default_k}, {long_w:,} timed steps: step time vs no checkpoint_dir",
            f"{median(times['5c']) * 1e3:.3f} ms/step",
            f"{median(times['none_long']) * 1e3:.3f} ms/step",
            f"{overhead:+.1f} % step time",
            f"≤ +{DEFAULT_CADENCE_TARGET:g} %",
            overhead <= DEFAULT_CADENCE_TARGET,
            {"ours_s_per_step": times["5c"], "reference_s_per_step": times["none_long"]},
        )
    )
    return rows


# -- case 6: import time ------------------------------------------------------------------------

_IMPORT = (
    "import time; t = time.perf_counter(); import pipekit_train; print(time.perf_counter() - t)"
)


def case_import_time(s: Settings) -> list[Row]:
    """6: ``import pipekit_train`` in a fresh interpreter (perf_counter around the import)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    subprocess.run([sys.executable, "-c", _IMPORT], env=env, check=True, capture_output=True)
    times = []
    for _ in range(s.import_runs):
        out = subprocess.run(
            [sys.executable, "-c", _IMPORT], env=env, check=True, capture_output=True, text=True
        )
        times.append(float(out.stdout.strip()))
    t = median(times)
    return [
        Row(
            "6",
            "`import pipekit_train`, fresh interpreter",
            f"{t:.3f} s",
            "—",
            "—",
            "≤ 0.2 s",
            t <= 0.2,
            {"seconds": times},
        )
    ]


def import_time_top(n: int = 5) -> list[tuple[float, str]]:
    """The ``n`` largest cumulative times of ``python -X importtime -c "import pipekit_train"``."""
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import pipekit_train"],
        check=True,
        capture_output=True,
        text=True,
    )
    rows = []
    for line in out.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]) / 1e6, parts[2].rstrip()))
    return sorted(rows, reverse=True)[:n]


# -- case 7: the persistent compilation cache through the CLI --------------------------------


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "pipekit-train"
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "pipekit_train.cli"]


def _cli_run(work: Path, cache: Path, tag: str, max_steps: int) -> tuple[float, float]:
    info = work / f"info-{tag}.json"
    cmd = [
        *_cli(),
        "run",
        str(ROOT / "examples" / "digits_mlp.yaml"),
        "--no-progress",
        "--set",
        f"max_steps={max_steps}",
        "--set",
        f"checkpoint_dir={work / ('ckpt-' + tag)}",
        "--set",
        f"metric_writer.path={work / ('metrics-' + tag + '.jsonl')}",
        "--compilation-cache",
        str(cache),
        "--info-json",
        str(info),
    ]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, cwd=work)
    wall = time.perf_counter() - start
    return wall, float(json.loads(info.read_text())["total_seconds"])


def case_compilation_cache(s: Settings, max_steps: int = 300) -> list[Row]:
    """7: CLI wall time with a fresh compilation cache folder, then again with it filled."""
    cold_wall, warm_wall, cold_run, warm_run = [], [], [], []
    for p in range(s.cli_pairs):
        work = Path(tempfile.mkdtemp(prefix="pipekit-bench-cli-"))
        try:
            cache = work / "jax-cache"
            wall, run = _cli_run(work, cache, "cold", max_steps)
            cold_wall.append(wall)
            cold_run.append(run)
            wall, run = _cli_run(work, cache, "warm", max_steps)
            warm_wall.append(wall)
            warm_run.append(run)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        _say(f"  pair {p + 1}: cold {cold_wall[-1]:.1f} s, warm {warm_wall[-1]:.1f} s")
    cmd = f"pipekit-train run examples/digits_mlp.yaml --no-progress --set max_steps={max_steps}"
    return [
        Row(
            "7",
            f"`{cmd}`: process wall time, 2nd run (cache filled) vs 1st (fresh cache)",
            f"{median(warm_wall):.1f} s",
            f"{median(cold_wall):.1f} s",
            f"{paired_ratio(cold_wall, warm_wall):.2f}",
            "report",
            None,
            {"warm_s": warm_wall, "cold_s": cold_wall},
        ),
        Row(
            "7b",
            "same runs, `backend_info['total_seconds']` (inside `run()`: set-up, compile, "
            "train, eval, checkpoints)",
            f"{median(warm_run):.1f} s",
            f"{median(cold_run):.1f} s",
            f"{paired_ratio(cold_run, warm_run):.2f}",
            "report",
            None,
            {"warm_s": warm_run, "cold_s": cold_run},
        ),
    ]


# -- the steps_per_call sweep -----------------------------------------------------------------

SWEEP_KS = (1, 10, 25, 50, 100, 200)
SWEEP_LOGS = (50, 1000)


@dataclass
class Sweep:
    rates: dict[tuple[int, int], list[float]]  # (log_every, K) -> steps/s per repeat
    relative: dict[tuple[int, int], float]  # paired median vs K=50 at the same log cadence
    program_rates: dict[int, list[float]] = field(default_factory=dict)  # K -> steps/s
    program_relative: dict[int, float] = field(default_factory=dict)  # paired vs K=50


def steps_per_call_sweep(data: dict[str, np.ndarray], s: Settings) -> Sweep:
    """Backend throughput over K, no checkpoint, at log_every_n_steps 50 and 1000."""
    configs = [(log, k) for log in SWEEP_LOGS for k in SWEEP_KS]
    secs: dict[tuple[int, int], list[float]] = {c: [] for c in configs}
    for r in range(s.sweep_repeats):
        for log, k in _rotate(configs, r * 5):
            start = 100 if log == 50 else 1000
            window = s.window if log == 50 else max(1000, s.window)
            run = backend_seconds_per_step(
                data, steps_per_call=k, start=start, window=window, log_every=log
            )
            secs[(log, k)].append(run.seconds_per_step)
        _say(f"  sweep round {r + 1}/{s.sweep_repeats} done")
    relative = {(log, k): paired_ratio(secs[(log, 50)], secs[(log, k)]) for log, k in configs}
    rates = {c: [1.0 / t for t in v] for c, v in secs.items()}
    program_secs = _program_sweep(data, s)
    return Sweep(
        rates,
        relative,
        {k: [1.0 / t for t in v] for k, v in program_secs.items()},
        {k: paired_ratio(program_secs[50], v) for k, v in program_secs.items()},
    )


def _program_sweep(data: dict[str, np.ndarray], s: Settings) -> dict[int, list[float]]:
    """The fusion curve without the driver: ``next_chunk(K)`` + ``train_chunk`` only.

    One program, every K compiled up front, then blocks of 200 steps per K, the K order
    rotating from block to block, each block ending on a device sync (as a log step
    does): a burst of machine load hits every K alike.
    """
    import jax

    block = 200
    program, source, batch_iterator = _program(data)
    carry = program.initial_carry
    stream = batch_iterator(source)

    def timed(carry: Any, k: int, chunks: int) -> tuple[float, Any]:
        start = time.perf_counter()
        metrics = None
        for _ in range(chunks):
            carry, metrics, _ = program.train_chunk(carry, stream.next_chunk(k), 0, k)
        jax.block_until_ready((carry, metrics))
        return time.perf_counter() - start, carry

    for k in SWEEP_KS:
        _, carry = timed(carry, k, 1)  # compile
    blocks = max(1, s.window // block)
    secs: dict[int, list[float]] = {k: [] for k in SWEEP_KS}
    for r in range(s.sweep_repeats):
        total = dict.fromkeys(SWEEP_KS, 0.0)
        for b in range(blocks):
            for k in _rotate(list(SWEEP_KS), r + b):
                elapsed, carry = timed(carry, k, block // k)
                total[k] += elapsed
        for k in SWEEP_KS:
            secs[k].append(total[k] / (blocks * block))
    return secs


# -- case 13: the lightning backend against plain Lightning and a plain torch loop -------------


def case_lightning(data: dict[str, np.ndarray], s: Settings) -> list[Row]:
    """9: lightning backend ÷ plain Lightning script (target ≥ 0.97); 9b: ÷ plain torch loop."""
    import _lightning_ref as ref

    start, w = 100, s.window
    runs: dict[str, Callable[[], float]] = {
        "backend": lambda: ref.backend_seconds_per_step(data, start, w),
        "lightning": lambda: ref.lightning_seconds_per_step(data, start, w),
        "torch": lambda: ref.torch_seconds_per_step(data, start, w),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    for r in range(s.repeats):
        for name in _rotate(list(runs), r):
            times[name].append(runs[name]())
        _say(
            f"  round {r + 1}/{s.repeats}: "
            + ", ".join(f"{n} {1 / times[n][-1]:.0f}/s" for n in runs)
        )
    rows = []
    for case, what, refname, target in (
        (
            "13",
            "lightning backend, log/50 ÷ plain Lightning script (same MLP, AdamW)",
            "lightning",
            0.97,
        ),
        ("13b", "lightning backend, log/50 ÷ plain torch loop", "torch", None),
    ):
        ratio = paired_ratio(times[refname], times["backend"])
        rows.append(
            Row(
                case,
                what,
                _rate(median(times["backend"])),
                _rate(median(times[refname])),
                f"{ratio:.2f}",
                f"≥ {target}" if target is not None else "reported",
                ratio >= target if target is not None else None,
                {"ours_s_per_step": times["backend"], "reference_s_per_step": times[refname]},
            )
        )
    return rows
