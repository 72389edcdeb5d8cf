"""The NumPyro benchmark cases 10-11c (see benchmarks/README.md). Each returns ``Row``s.

10: numpyro-svi steady state ÷ a hand-written ``jax.jit(svi.update)`` loop, in this
process, interleaved rounds. 10b/10c/11/11b/11c: whole runs (compilation included), each
in a fresh interpreter (``_bayes_worker.py``), so a "repeated run" is a new process that
finds the backend's persistent compilation cache warm, while NumPyro's ``svi.run`` /
``MCMC.run`` compile again (JAX's default: no persistent cache). Every subprocess gets
``PYTHONHASHSEED=0``: NumPyro's ``Trace_ELBO`` sums sites in ``set`` order, which is in the
traced program and so in the cache key (docs/decisions/0123-svi-losses-and-pythonhashseed.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from _bayes_common import SVI_SETTINGS, HandSvi, Stamps, regression, svi_loop
from _cases import Row, Settings, _rotate, _say
from _common import median, paired_ratio
from _spawn import Proc, spawn

WORKER = Path(__file__).resolve().parent / "_bayes_worker.py"


def case_svi_vs_hand_update_loop(s: Settings) -> list[Row]:
    """10: backend (K=50, log every 50) ÷ ``jax.jit(svi.update)`` per step, steady state."""
    data = regression()
    start, window = 500, max(SVI_SETTINGS.log_every, (2 * s.window) // 50 * 50)
    ours: list[float] = []
    ref: list[float] = []

    def backend() -> None:
        stamps = Stamps()
        svi_loop(data, start + window, callbacks=[stamps]).run()
        ours.append((stamps.at[start + window] - stamps.at[start]) / window)

    def hand() -> None:
        loop = HandSvi(data)
        loop.run(start)  # compile + warm-up, untimed
        ref.append(loop.run(window) / window)

    for r in range(s.repeats):
        for f in _rotate([backend, hand], r):
            f()
        _say(
            f"  case 10 round {r + 1}: backend {ours[-1] * 1e6:.0f} µs/step, "
            f"hand {ref[-1] * 1e6:.0f} µs/step"
        )
    ratio = paired_ratio(ref, ours)
    return [
        Row(
            "10",
            "numpyro-svi (K=50, log every 50) ÷ hand-written `jax.jit(svi.update)` loop, "
            f"minibatch {SVI_SETTINGS.batch}, steady state",
            f"{1 / median(ours):,.0f} steps/s",
            f"{1 / median(ref):,.0f} steps/s",
            f"{ratio:.2f}",
            "≥ 1.0",
            ratio >= 1.0,
            {"ours": ours, "reference": ref},
        )
    ]


#: Every fresh-process run of :func:`cases_whole_runs` by key (``svi_cold``, ``mcmc_run``, ...),
#: as the parent saw it (wall, peak RSS, marks): the whole-run suite (``_whole_cases``) reads
#: its numpyro rows from here rather than running the same processes again.
PROCS: dict[str, list[Proc]] = {}


def _proc(mode: str, cache: str, key: str) -> float:
    p = spawn([str(WORKER), mode, cache], first_step=1)
    PROCS.setdefault(key, []).append(p)
    assert p.seconds is not None
    return p.seconds


def _row(case: str, what: str, ours: list[float], ref: list[float], target: float | None) -> Row:
    ratio = paired_ratio(ref, ours)
    return Row(
        case,
        what,
        f"{median(ours):.2f} s",
        f"{median(ref):.2f} s",
        f"{ratio:.2f}",
        "report" if target is None else f"≥ {target:g}",
        None if target is None else ratio >= target,
        {"ours": ours, "reference": ref},
    )


def cases_whole_runs(s: Settings) -> list[Row]:
    """10b/10c (SVI) and 11/11b/11c (MCMC): whole runs in fresh processes, interleaved."""
    t: dict[str, list[float]] = {
        k: []
        for k in (
            "svi_cold",
            "svi_warm",
            "svi_run",
            "mcmc_cold",
            "mcmc_warm",
            "mcmc_ckpt",
            "mcmc_run",
        )
    }
    for r in range(s.repeats):
        with (
            tempfile.TemporaryDirectory(prefix="pipekit-bench-cache-") as svi_cache,
            tempfile.TemporaryDirectory(prefix="pipekit-bench-cache-") as mcmc_cache,
        ):

            def svi_first(c: str = svi_cache) -> None:
                t["svi_cold"].append(_proc("svi-backend", c, "svi_cold"))  # empty: compiles
                t["svi_warm"].append(_proc("svi-backend", c, "svi_warm"))  # same cache, new process

            def mcmc_first(c: str = mcmc_cache, r: int = r) -> None:
                t["mcmc_cold"].append(_proc("mcmc-backend", c, "mcmc_cold"))
                for mode, key in _rotate(
                    [("mcmc-backend", "mcmc_warm"), ("mcmc-backend-ckpt", "mcmc_ckpt")], r
                ):
                    t[key].append(_proc(mode, c, key))

            steps = [
                svi_first,
                lambda: t["svi_run"].append(_proc("svi-run", "off", "svi_run")),
                mcmc_first,
                lambda: t["mcmc_run"].append(_proc("mcmc-run", "off", "mcmc_run")),
            ]
            for f in _rotate(steps, r):
                f()
        _say(
            f"  cases 10b-11c round {r + 1}: "
            + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in t.items())
        )
    n = SVI_SETTINGS.steps
    ckpt = _row(
        "11c",
        "numpyro-mcmc, a checkpoint every 250 draws, ÷ the same run without (both warm cache); "
        "ratio < 1 is the overhead",
        t["mcmc_ckpt"],
        t["mcmc_warm"],
        None,
    )
    ckpt.raw["overhead"] = median(t["mcmc_ckpt"]) / median(t["mcmc_warm"]) - 1
    return [
        _row(
            "10b",
            f"numpyro-svi ÷ `svi.run`, {n} full-batch steps, first run (empty cache), "
            "fresh process",
            t["svi_cold"],
            t["svi_run"],
            1.0,
        ),
        _row(
            "10c",
            f"numpyro-svi ÷ `svi.run`, {n} full-batch steps, repeated run: fresh process, "
            "warm persistent cache (svi.run compiles again)",
            t["svi_warm"],
            t["svi_run"],
            2.0,
        ),
        _row(
            "11",
            "numpyro-mcmc ÷ `MCMC.run`, eight schools 500+1000, first run (empty cache), "
            "no checkpoint_dir, fresh process",
            t["mcmc_cold"],
            t["mcmc_run"],
            1.0,  # issue 34
        ),
        _row(
            "11b",
            "numpyro-mcmc ÷ `MCMC.run`, repeated run: fresh process, warm persistent cache",
            t["mcmc_warm"],
            t["mcmc_run"],
            2.0,
        ),
        ckpt,
    ]
