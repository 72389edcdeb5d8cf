"""pipekit-train speed benchmarks: ``nox -s bench`` or ``python benchmarks/run.py``.

Runs every case of benchmarks/README.md, prints a markdown table and writes it to
``benchmarks/results/latest.md`` (raw timings next to it in ``latest.json``).

    python benchmarks/run.py                  # everything (~6-9 min on 2 cores)
    python benchmarks/run.py --quick          # a smoke run: 2 rounds, short windows
    python benchmarks/run.py --cases 1,2,3 --no-sweep
    python benchmarks/run.py --whole [--quick] # case 17 alone: whole runs against each peer
"""

from __future__ import annotations

import os

# Keras must see its backend before it is first imported (by _keras_ref).
os.environ["KERAS_BACKEND"] = "jax"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _bayes_cases  # noqa: E402
import _blackjax_cases  # noqa: E402
import _cases  # noqa: E402
import _population_cases  # noqa: E402
import _whole_cases  # noqa: E402
from _cases import Row, Settings  # noqa: E402
from _common import digits  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

ALL_CASES = tuple(str(n) for n in range(1, 19))
ROOT = Path(__file__).resolve().parent.parent
PERFORMANCE_MD = ROOT / "docs" / "performance.md"
WHOLE_BEGIN = "<!-- whole-runs:begin (written by benchmarks/run.py --whole) -->"
WHOLE_END = "<!-- whole-runs:end -->"

#: What bounds a case that is below its target, found by profiling (py-spy, and timing the
#: pieces) on the 2-core development machine; printed under the table for each case below
#: target, formatted with the row's raw numbers.
_CHECKPOINT_500 = (
    "two things, both measured. (a) The pipekit side also writes an Orbax checkpoint every "
    "500 steps, which the reference does not: 0.27 ms per step, ~20 % of step time (case 5 "
    "has the per-save cost); without it the backend at K=50 ran 1.63x Keras-tiled (962 vs "
    "583 steps/s), with it 1.18x (5 interleaved rounds). (b) The fused step is compute-bound "
    "on XLA's 2-thread intra-op pool (about 62 MFLOP per step), which makes it the path most "
    "sensitive to other processes: one busy-loop process took the fused step from 0.93 to "
    "1.79 ms/step, the unfused one from 1.24 to 1.84 and the hand-written loop (whose extra "
    "~1 ms per step is eqx.filter_jit's per-call pytree handling, Python-bound) only from 2.17 "
    "to 3.09; so under load every ratio shrinks toward 1 (see the load averages below; at a "
    "1-minute load of ~1 on 2 cores case 2 measured 1.80-1.85 and case 3 1.25)."
)
_DATA_PATH = (
    "BatchSource.get_batches runs while the device idles at each log step: ~25 µs per batch "
    "at K=1 (Python per call) and ~0.7 ms per 50-batch chunk (one index array per batch, then "
    "numpy fancy indexing; one permutation slice per epoch plus np.take cut it to ~0.3 ms and "
    "took 4b from 0.98 to 1.01 in a test), i.e. 1-3 % of a ~1 ms step; the rest is machine "
    "load, see the per-round ratios in latest.json."
)
_SVI_FIRST = (
    "svi.run pays NumPyro's eager svi.init: AutoNormal's prototype trace and init search run "
    "op by op, ~140 tiny compilations, most of its cold run; the backend runs the same "
    "svi.init as one compiled program (decision 0210: the tracers the guide keeps come back "
    "concrete), so its start costs well under a second. Below target only under load: the "
    "rest is the training chunk's compilation, which both sides pay. Since 2026-12-05 the run "
    "also checks its fit (decision 0212: PSIS of 1,000 guide draws, one more compiled "
    "program, ~1.1 s cold): 10b read 1.59 before, 1.09-1.14 after."
)
_MCMC_ARVIZ = (
    "ahead since decision 0220 (1.07, 5.54 against 6.05 s, 5 rounds, 2026-12-06; 0.90-0.94 "
    "before). Both sides pay NumPyro's eager init_kernel at the start (the density's value "
    "and gradient op by op), which the backend keeps eager because MCMC.run's draws depend "
    "on its bits (a compiled start differs by 1 ulp and the chain then differs); warmup and "
    "sampling share one compiled chunk program "
    "(tests/numpyro/test_mcmc_compiles_no_more_than_mcmc_run.py). The backend's default "
    "start is screened (decision 0213: 16 candidate starts a chain weighed in one more "
    "compiled program, ~0.5 s cold), which MCMC.run does not do; what pays for it: given "
    "the starts, MCMC.run's kernel.init still runs initialize_model's prototype trace and "
    "search for a start of its own (its uniform draws and a first eager evaluation of the "
    "density, then discarded), and checks every distribution's arguments with one more "
    "compiled operation each; the backend builds the potential itself at the screened "
    "starts and skips both (decision 0220), the same bits. A warm cache pays nothing for "
    "the screen (11b). Measured and not taken: the screen run eagerly (the 16 eager "
    "evaluations cost what the compile saves), the NUTS scan compiled with LLVM "
    "optimisation off (slower sampling for every longer run), the data as NumPy arrays "
    "(the arguments' checks in NumPy; a model that indexes its data with a traced index, "
    "NumPyro's ar2 example, then fails)."
)
_CHECKPOINT_COST = (
    "Orbax's fixed cost per commit bounds it: one checkpoint cost {per_checkpoint_ms:.0f} ms "
    "of step time here, {per_checkpoint_steps:.0f} training steps of this small model. "
    "Measured with process CPU time per save of the digits MLP + AdamW state (1 MB, 21 "
    "leaves): 48 ms before packing; 25 ms with the small leaves packed into one array per "
    "dtype (Orbax pays ~1 ms per array); 15-23 ms with the packed state written without "
    "OCDBT. cProfile of what is left: each save runs ~7 private asyncio event loops and "
    "starts ~13 threads, writes the tmp directory, the step and item metadata files and "
    "the commit rename, and deletes the oldest step (keep_last); the 1 MB of array data "
    "itself takes ~1 ms (np.savez + fsync + rename: 0.9 ms of CPU). Deleting the oldest "
    "step costs ~1 ms per file on this file system; it now runs in Orbax's deleter thread "
    "(and the trace is packed without OCDBT), which cut a save from 95 to 39 ms in a "
    "harness with 12 ms of compute between saves, but did not move this case measurably "
    "(+24.8 % before, +27.2 % after, at different loads): on 2 cores that work competes "
    "with the training step (and the GIL) on whichever thread it runs. Within 5 % at this "
    "model size means a checkpoint every ≥ {every_for_5pct:,.0f} steps."
)
_BLACKJAX_CKPT = (
    "the checkpoint every 500 draws, measured by row 14a (the same run without checkpoint_dir, "
    "per-draw metrics and the trace still on, is at 0.93-0.95 of the raw scan loop in the "
    "same float64): 500 eight-schools NUTS draws take ~27 ms here, and one save costs ~19 ms "
    "of wall time "
    "(~28 ms before old steps were deleted in the background and the trace lost OCDBT) even "
    "with the state and the trace packed into one array per dtype (~3 arrays per item): "
    "Orbax's fixed per-commit cost, profiled in case 5. A bare Orbax Checkpointer (no "
    "manager, one item) still took ~14 ms per save here, np.savez + fsync + rename 1.1 ms. "
    "At this cadence the ratio is bounded by the save, not by the sampler; ≥ 0.9 would need "
    "a save under ~1.5 ms, i.e. a sparser cadence (every ~5,000 draws) for a model this "
    "cheap, or a model whose 500 draws take ≥ ~0.2 s (4 chains of sblrc take ~0.16 s)."
)
_WHOLE_BAYES = (
    "numpyro-svi compiles svi.init as one program (svi.run runs it op by op); numpyro-mcmc "
    "pays the eager init_kernel at its start, as MCMC.run does (its bits are the draws'), but "
    "not initialize_model's search for a start of its own (decision 0220); blackjax "
    "starts its chains in one compiled program; each writes its compiled programs to the "
    "persistent cache so that a repeated run is about 2-3x faster."
)
_WHOLE_TORCH = (
    "the same Trainer.fit runs on both sides (cProfile: 290 s vs 296 s at a load of ~10) and "
    "the pipekit process imports no JAX, Grain or Orbax (-X importtime); under load the ratio is "
    "the noise of the torch training loop, see the per-round walls in whole-runs.json and "
    "docs/performance.md."
)
_BLACKJAX_DEFAULT_CADENCE = (
    "the sampler loop itself (14g, no checkpoint_dir: 0.93 of the raw scan in the same "
    "float64) and the default cadence's saves: every 500 draws but no more often than 25x a "
    "save's whole cost, 3-4 commits of ~20 ms over 40,000 draws, which that floor bounds at "
    "~4 % of wall time by construction (decision 0056). What the loop owes the raw scan, "
    "measured 2026-12-06: the device waits ~0.5 ms at each 500-draw host event (the window's "
    "fetch, its history means, the callbacks) of a ~27 ms chunk, and each draw folds its key "
    "from the step in the scan (the resume promise: a draw's key depends on its step only). "
    "Compared in float32 (14i) the same loop reads 0.84-0.94: the float64 default costs "
    "~1.6x per draw on this CPU (decision 0124)."
)
BOUND: dict[str, str] = {
    "17 numpyro-svi": _WHOLE_BAYES,
    "17 numpyro-mcmc": _WHOLE_BAYES,
    "17 blackjax": _WHOLE_BAYES,
    "17 lightning": _WHOLE_TORCH,
    "14": _BLACKJAX_CKPT,
    "14f": _BLACKJAX_DEFAULT_CADENCE,
    "10b": _SVI_FIRST,
    "11": _MCMC_ARVIZ,
    "11b": _MCMC_ARVIZ,
    "1": _CHECKPOINT_500,
    "2": _CHECKPOINT_500,
    "3": _CHECKPOINT_500,
    "3b": _CHECKPOINT_500,
    "4": _DATA_PATH,
    "4b": _DATA_PATH,
    "5": _CHECKPOINT_COST,
    "5b": _CHECKPOINT_COST,
}


def _versions() -> dict[str, str]:
    out = {}
    for dist in (
        "jax",
        "jaxlib",
        "equinox",
        "optax",
        "grain",
        "orbax-checkpoint",
        "keras",
        "numpy",
        "pipekit-train-core",
        "pipekit-train-equinox",
        "numpyro",
        "arviz",
        "pipekit-train-numpyro",
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _environment() -> dict[str, str]:
    import jax

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0
    env = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpus": f"{os.cpu_count()} (usable by this process: {usable})",
        "load average at start": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "jax devices": ", ".join(str(d) for d in jax.devices()),
        "JAX_PLATFORMS": os.environ.get("JAX_PLATFORMS", "(unset)"),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", "(unset)"),
        # Set: no .pyc is cached, so every fresh interpreter recompiles what it imports
        # (cases 6 and 7 pay that).
        "PYTHONDONTWRITEBYTECODE": os.environ.get("PYTHONDONTWRITEBYTECODE", "(unset)"),
    }
    env.update(_versions())
    return env


def _table(rows: list[Row]) -> list[str]:
    lines = [
        "| case | what | pipekit (median) | reference (median) | ratio | target | result |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        result = "report" if r.ok is None else ("pass" if r.ok else "**below**")
        lines.append(
            f"| {r.case} | {r.what} | {r.ours} | {r.reference} | {r.ratio} | {r.target} "
            f"| {result} |"
        )
    return lines


def _sweep_table(sweep: _cases.Sweep) -> list[str]:
    from statistics import median

    logs = _cases.SWEEP_LOGS
    head = "| K |" + "".join(f" steps/s, log every {log} | vs K=50 (log {log}) |" for log in logs)
    head += " steps/s, compiled step only | vs K=50 (step only) |"
    lines = [head, "|---|" + "---|---|" * (len(logs) + 1)]
    for k in _cases.SWEEP_KS:
        cells = "".join(
            f" {median(sweep.rates[(log, k)]):,.0f} | {sweep.relative[(log, k)]:.2f} |"
            for log in logs
        )
        cells += f" {median(sweep.program_rates[k]):,.0f} | {sweep.program_relative[k]:.2f} |"
        lines.append(f"| {k} |{cells}")
    return lines


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _commit() -> str:
    import subprocess

    def git(*a: str) -> str:
        out = subprocess.run(["git", *a], cwd=ROOT, capture_output=True, text=True, check=False)
        return out.stdout.strip()

    sha = git("rev-parse", "--short", "HEAD") or "unknown"
    return sha + (" (with uncommitted changes)" if git("status", "--porcelain") else "")


def _whole_section(table: list[str], env: dict[str, str], s: Settings) -> list[str]:
    """Case 17's table with the machine and the load it ran under."""
    return [
        f"Rounds: {s.repeats} (interleaved, the order alternating per round)"
        + (" — a `--quick` smoke run" if s.repeats < 5 else "")
        + ". Machine: "
        f"{env['cpus']} CPUs (`nproc`), {_cpu_model()}; load average (1, 5, 15 min) "
        f"{env['load average at start']} at the start, {env['load average at end']} at the "
        f"end; {env['date']}; commit {_commit()}; PYTHONDONTWRITEBYTECODE="
        f"{env['PYTHONDONTWRITEBYTECODE']}.",
        "",
        "Compile caches: the pipekit side starts each round from a fresh, empty persistent "
        "compilation cache folder (cold); the warm rows are a second fresh process on that "
        "folder. The peers run without one (JAX's default; Lightning compiles nothing).",
        "",
        *table,
    ]


def _write_performance_md(section: list[str]) -> None:
    """Replace the generated part of docs/performance.md's "Whole runs against each peer"."""
    text = PERFORMANCE_MD.read_text()
    body = "\n".join([WHOLE_BEGIN, "", *section, "", WHOLE_END])
    if WHOLE_BEGIN in text and WHOLE_END in text:
        head, rest = text.split(WHOLE_BEGIN, 1)
        text = head + body + rest.split(WHOLE_END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n## Whole runs against each peer\n\n" + body + "\n"
    PERFORMANCE_MD.write_text(text)
    print(f"wrote {PERFORMANCE_MD}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="interleaved rounds per case")
    parser.add_argument("--window", type=int, default=1000, help="timed steps per measurement")
    parser.add_argument("--sweep-repeats", type=int, default=3)
    parser.add_argument("--cli-pairs", type=int, default=2, help="cold/warm CLI pairs (case 7)")
    parser.add_argument("--cases", default=",".join(ALL_CASES), help="comma-separated case ids")
    parser.add_argument("--no-sweep", action="store_true", help="skip the steps_per_call sweep")
    parser.add_argument("--quick", action="store_true", help="smoke run: 2 rounds, short windows")
    parser.add_argument(
        "--whole",
        action="store_true",
        help="case 17 alone (whole runs against each peer, fresh processes): writes "
        "results/whole-runs.md and the table of docs/performance.md",
    )
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="case 9: time with process CPU time and one torch thread (robust to other load)",
    )
    args = parser.parse_args(argv)
    if args.whole:
        args.cases, args.no_sweep = "17", True
    if args.out is None:
        args.out = RESULTS / ("whole-runs.md" if args.whole else "latest.md")
    if args.cpu_time:
        import _lightning_ref
        import torch

        torch.set_num_threads(1)
        _lightning_ref.CLOCK = time.process_time

    from pipekit_train.adapters.equinox._options import DEFAULT_STEPS_PER_CALL

    s = Settings(
        repeats=args.repeats,
        window=args.window,
        sweep_repeats=args.sweep_repeats,
        cli_pairs=args.cli_pairs,
        default_k=DEFAULT_STEPS_PER_CALL,
    )
    if args.quick:
        s = Settings(
            repeats=2,
            window=500,
            sweep_repeats=1,
            cli_pairs=1,
            import_runs=3,
            default_k=DEFAULT_STEPS_PER_CALL,
        )
    cases = [c.strip() for c in args.cases.split(",") if c.strip()]
    unknown = set(cases) - set(ALL_CASES)
    if unknown:
        parser.error(f"unknown case ids {sorted(unknown)}; known: {', '.join(ALL_CASES)}")

    started = time.perf_counter()
    env = _environment()
    data = digits()
    rows: list[Row] = []

    def section(title: str) -> None:
        print(f"[{time.perf_counter() - started:6.0f} s] {title}", file=sys.stderr, flush=True)

    if {"1", "2", "3"} & set(cases):
        section("cases 1-3: backend vs hand-written loop and Keras fit")
        rows += [
            r for r in _cases.cases_backend_vs_references(data, s) if r.case.rstrip("b") in cases
        ]
    if "4" in cases:
        section("case 4: Grain batch path vs in-memory slicing")
        rows += _cases.case_data_path(data, s)
    if "5" in cases:
        section("case 5: async checkpoint every 100 and every 500 steps, default cadence")
        rows += _cases.case_checkpoint_cost(data, s)
    if "6" in cases:
        section("case 6: import time")
        rows += _cases.case_import_time(s)
    if "7" in cases:
        section("case 7: persistent compilation cache (CLI, two processes per pair)")
        rows += _cases.case_compilation_cache(s)
    if "8" in cases:
        section("case 8: backend vs hand-written jit + donation + lax.scan loop")
        rows += _cases.case_backend_vs_scan_loop(data, s)
    if "9" in cases:
        section("case 9: keras backend vs plain Keras fit")
        rows += _cases.case_keras_backend(data, s)
    if "10" in cases:
        section("case 10: numpyro-svi vs hand-written jax.jit(svi.update) loop")
        rows += _bayes_cases.case_svi_vs_hand_update_loop(s)
    if {"10", "11"} & set(cases):
        section("cases 10b-11c: whole numpyro-svi / numpyro-mcmc runs in fresh processes")
        rows += [r for r in _bayes_cases.cases_whole_runs(s) if r.case.rstrip("bc") in cases]
    if "12" in cases:
        section("case 12: step-time cost of each training feature")
        rows += _cases.case_feature_costs(data, s)
    if "13" in cases:
        section("case 13: lightning backend vs plain Lightning and a plain torch loop")
        rows += [r for r in _cases.case_lightning(data, s)]
    if "15" in cases:
        section("case 15: step-time cost of each training feature on the keras backend")
        rows += _cases.case_keras_feature_costs(data, s)
    if "16" in cases:
        section("case 16: step-time cost of each training feature on the lightning backend")
        rows += _cases.case_lightning_feature_costs(data, s)
    if "18" in cases:
        section("case 18: an Equinox population of 16 trials vs 16 sequential trials")
        rows += _population_cases.case_population(data, s)
    if "14" in cases:
        section("cases 14-14c: blackjax NUTS vs raw BlackJAX loops")
        rows += _blackjax_cases.case_backend_vs_raw_nuts(s)
        rows += _blackjax_cases.case_default_cadence(s)
        rows += _blackjax_cases.case_whole_run(s)
    whole: tuple[list[str], dict[str, Any]] | None = None
    if "17" in cases:
        section("case 17: whole runs against each peer, fresh processes")
        whole_rows, whole_table, whole_raw = _whole_cases.suite(s)
        rows += whole_rows
        whole = (whole_table, whole_raw)
    sweep = None
    if not args.no_sweep:
        section("steps_per_call sweep")
        sweep = _cases.steps_per_call_sweep(data, s)
    env["load average at end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    env["benchmark wall time"] = f"{time.perf_counter() - started:.0f} s"

    cpus = os.cpu_count() or 1
    # The load before this run's own work (at the end it includes this run's threads).
    load_at_start = float(env["load average at start"].split()[0])
    busy = load_at_start > 0.9 * cpus
    lines = [
        "# pipekit-train benchmarks",
        "",
        "Cases 1-9: digits MLP 64-256-256-10, batch 128, AdamW, cross-entropy; cases 10-11c: "
        "NumPyro SVI (regression) and NUTS (eight schools) (see benchmarks/README.md).",
        "Ratio = reference time ÷ pipekit time, the median over interleaved rounds of the "
        "paired ratio (> 1: pipekit is faster); step rates are medians over rounds. "
        f"Rounds: {s.repeats}; timed window: {s.window} steady-state steps.",
        "",
        *_table(rows),
        "",
    ]
    if busy:
        lines += [
            "**Other processes were using the machine** (1-minute load average "
            f"{load_at_start:.2f} on {cpus} CPUs before this run started): the fused, "
            "compute-bound path loses the most under load, so the ratios of cases 1-3 are low; "
            "rerun on a quiet machine to compare against the targets.",
            "",
        ]
    below = [r for r in rows if r.ok is False]
    if below:
        lines += ["## Below target: what bounds it", ""]
        noted: set[str] = set()
        for r in below:
            if r.case in noted:
                continue
            noted.add(r.case)
            note = BOUND.get(r.case, "not profiled yet.").format(**r.raw)
            lines.append(f"- case {r.case}: {note}")
        if any(r.case == "6" for r in below):
            top = _cases.import_time_top()
            lines.append(
                "  `-X importtime`, largest cumulative: "
                + ", ".join(f"{name.strip()} {sec:.3f} s" for sec, name in top)
            )
        lines.append("")
    if sweep is not None:
        lines += [
            "## steps_per_call sweep",
            "",
            "Backend through `loop.run()`, no checkpoint; steps/s median of "
            f"{s.sweep_repeats} rounds; 'vs K=50' is the paired ratio (> 1: faster than "
            "K=50). With log every 50 the chunks stop at every log step, so K > 50 runs "
            "as K = 50. 'Compiled step only': `BatchIterator.next_chunk(K)` + "
            "`EquinoxProgram.train_chunk` without the driver, every K interleaved in "
            "blocks of 200 steps that end on a device sync (the fusion curve with the "
            "least noise).",
            "",
            *_sweep_table(sweep),
            "",
        ]
    if whole is not None:
        whole_md = _whole_section(whole[0], env, s)
        lines += ["## Whole runs against each peer (case 17)", "", *whole_md, ""]
        if args.whole:
            _write_performance_md(whole_md)
    lines += ["## Environment", ""]
    lines += [f"- {k}: {v}" for k, v in env.items()]
    text = "\n".join(lines) + "\n"
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    raw = {
        "settings": s.__dict__,
        "environment": env,
        "rows": [r.__dict__ for r in rows],
        "sweep": None
        if sweep is None
        else {f"log{log}_k{k}": v for (log, k), v in sweep.rates.items()},
        "whole_runs": None if whole is None else whole[1],
    }
    args.out.with_suffix(".json").write_text(json.dumps(raw, indent=1))
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
