"""Case 17, the whole-run suite: each backend against its own peer, fresh processes.

Every side is a fresh interpreter spawned by :func:`_spawn.spawn` (the parent's
``time.monotonic()`` at spawn, the worker's marks on the same clock, ``os.wait4``'s
``ru_maxrss`` at exit), interleaved: in round ``r`` the order of the sides rotates by ``r``.
Reported, as medians over rounds (ratios: the median of the per-round paired ratios):

- **first step**: spawn → the first step ≥ 50 done (the training backends; 50 is the first
  log step of the pipekit side and the first chunk of the scan script; plain Keras marks at
  epoch ends, so its first mark ≥ 50 is step 56) or the first host event (the Bayesian
  backends, whose peers run as one compiled call with nothing to observe: "n/a");
- **whole run**: spawn → exit (interpreter start, imports, data, compilation, the run, the
  end-of-run work, interpreter exit);
- **steady state**: steps/s between the first mark at or after half of the last marked step
  and the last mark;
- **peak RSS**: the child's ``ru_maxrss``.

Compile caches: the pipekit side starts each round from a fresh, empty persistent
compilation cache folder (cold); the JAX backends also run a second fresh process on that
folder (warm rows). The peers run without one (JAX's default). The numpyro rows are the
processes of cases 10b-11c and the blackjax row those of 14c/14d (``_bayes_cases.PROCS``,
``_blackjax_cases.PROCS``): run once, read here.
"""

from __future__ import annotations

import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import _bayes_cases
import _blackjax_cases
from _cases import Row, Settings, _rotate, _say
from _common import median
from _spawn import Proc, spawn

WORKER = Path(__file__).resolve().parent / "_train_worker.py"
FIRST_STEP = 50

#: backend → (the peer's name, whole-run wall target (peer ÷ ours), or None: reported).
PEERS: dict[str, tuple[str, float | None]] = {
    "equinox": ("hand-written jit + donation + lax.scan script (case 8's loop)", None),
    "numpyro-svi": ("`svi.run`", 1.0),
    "numpyro-mcmc": ("`MCMC.run`", 1.0),
    "blackjax": ("raw `window_adaptation` + `lax.scan`", None),
    "lightning": ("plain Lightning script (`Trainer(logger=False, ...)`)", 0.97),
    "keras": ("plain Keras `fit`", 0.97),
}
RSS_TARGET = 1.2
WORK: dict[str, str] = {
    "equinox": "digits MLP, 2,000 steps (--quick: 650), K=50, log every 50",
    "numpyro-svi": "sblrc, 2,000 full-batch steps, K=50",
    "numpyro-mcmc": "eight schools, 500 + 1,000 draws, K=250",
    "blackjax": "eight schools NUTS, 500 + 1,000 draws, K=500",
    "lightning": "torch MLP on digits, 1,050 steps (--quick: 350), log every 50",
    "keras": "Keras MLP on digits, 1,050 steps = 75 epochs (--quick: 350), log every 50",
}


@dataclass
class Sides:
    ours: list[Proc]
    peer: list[Proc]
    warm: list[Proc]


def _train(backend: str, peer_mode: str, s: Settings, warm: bool) -> Sides:
    """The equinox / lightning / keras rounds: ours (cold, then warm) and the peer script."""
    out = Sides([], [], [])
    scale = "1" if s.repeats >= 5 else "3"  # --quick: a third of the steps
    for r in range(s.repeats):
        with tempfile.TemporaryDirectory(prefix="pipekit-bench-cache-") as cache:

            def ours(c: str = cache) -> None:
                args = [str(WORKER), f"{backend}-backend", c if warm else "off", scale]
                out.ours.append(spawn(args, first_step=FIRST_STEP))
                if warm:
                    out.warm.append(spawn(args, first_step=FIRST_STEP))

            def peer() -> None:
                args = [str(WORKER), peer_mode, "off", scale]
                out.peer.append(spawn(args, first_step=FIRST_STEP))

            for f in _rotate([ours, peer], r):
                f()
        _say(
            f"  case 17 {backend} round {r + 1}: ours {out.ours[-1].wall:.2f} s"
            + (f" (warm {out.warm[-1].wall:.2f} s)" if warm else "")
            + f", peer {out.peer[-1].wall:.2f} s"
        )
    return out


def _bayes(s: Settings) -> tuple[list[Row], dict[str, Sides]]:
    """The numpyro and blackjax sides, from the processes of cases 10b-11c and 14c/14d."""
    rows: list[Row] = []
    if not _bayes_cases.PROCS:
        rows += _bayes_cases.cases_whole_runs(s)
    if not _blackjax_cases.PROCS:
        rows += _blackjax_cases.case_whole_run(s)
    b, j = _bayes_cases.PROCS, _blackjax_cases.PROCS
    return rows, {
        "numpyro-svi": Sides(b["svi_cold"], b["svi_run"], b["svi_warm"]),
        "numpyro-mcmc": Sides(b["mcmc_cold"], b["mcmc_run"], b["mcmc_warm"]),
        "blackjax": Sides(j["backend"], j["raw"], j["backend_warm"]),
    }


def _paired(ours: list[float | None], peer: list[float | None], invert: bool) -> float | None:
    pairs = [(o, p) for o, p in zip(ours, peer, strict=False) if o and p]
    if not pairs:
        return None
    return median([(o / p) if invert else (p / o) for o, p in pairs])


def _med(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return median(vals) if vals else None


@dataclass
class Measure:
    ours: float | None
    peer: float | None
    ratio: float | None


def _measures(ours: list[Proc], peer: list[Proc]) -> dict[str, Measure]:
    """first, wall (ratio peer ÷ ours: > 1 ours faster), rate (ours ÷ peer), rss (ours ÷ peer)."""
    out: dict[str, Measure] = {}
    for name, get, invert in (
        ("first", lambda p: p.first, False),
        ("wall", lambda p: p.wall, False),
        ("rate", lambda p: p.rate, True),
        ("rss_mib", lambda p: p.rss_kib / 1024, True),
    ):
        o, p = [get(x) for x in ours], [get(x) for x in peer]
        out[name] = Measure(_med(o), _med(p), _paired(o, p, invert))
    return out


def _cell(m: Measure, fmt: str, ratio_fmt: str = "{:.2f}") -> str:
    def f(v: float | None) -> str:
        return "n/a" if v is None else fmt.format(v)

    ratio = "n/a" if m.ratio is None else ratio_fmt.format(m.ratio)
    return f"{f(m.ours)} / {f(m.peer)} (**{ratio}**)"


def suite(s: Settings) -> tuple[list[Row], list[str], dict[str, Any]]:
    """Run case 17; return rows for the main table, the markdown table, the raw data."""
    sides: dict[str, Sides] = {}
    rows, bayes = _bayes(s)
    sides["equinox"] = _train("equinox", "equinox-scan", s, warm=True)
    sides.update(bayes)
    sides["lightning"] = _train("lightning", "lightning-plain", s, warm=False)
    sides["keras"] = _train("keras", "keras-plain", s, warm=True)

    table = [
        "Each cell: pipekit (median) / peer (median) (**paired ratio**). Ratios of times are "
        "peer ÷ pipekit and of steps/s pipekit ÷ peer (> 1: pipekit is faster); RSS is "
        "pipekit ÷ peer (< 1: pipekit uses less).",
        "",
        "| backend (work) | peer | first step, s | whole run, s | whole-run target "
        "| steady state, steps/s | peak RSS, MiB | RSS target |",
        "|---|---|---|---|---|---|---|---|",
    ]
    raw: dict[str, Any] = {}
    ordered = ["equinox", "numpyro-svi", "numpyro-mcmc", "blackjax", "lightning", "keras"]
    for backend in ordered:
        side = sides[backend]
        peer_name, target = PEERS[backend]
        variants = [("", side.ours)] + ([(" — warm cache", side.warm)] if side.warm else [])
        for suffix, ours in variants:
            m = _measures(ours, side.peer)
            label = f"{backend}{suffix} ({WORK[backend]})"
            wall_ok = None if (target is None or suffix) else (m["wall"].ratio or 0) >= target
            rss_ok = (m["rss_mib"].ratio or 99) <= RSS_TARGET
            wall_target = "report" if wall_ok is None else f"≥ {target:g}"
            table.append(
                f"| {label} | {peer_name} | {_cell(m['first'], '{:.2f}')} "
                f"| {_cell(m['wall'], '{:.2f}')} | {wall_target} "
                f"| {_cell(m['rate'], '{:,.0f}')} | {_cell(m['rss_mib'], '{:,.0f}')} "
                f"| ≤ {RSS_TARGET:g} |"
            )
            key = backend + ("-warm" if suffix else "")
            raw[key] = {
                "measures": {k: asdict(v) for k, v in m.items()},
                "ours": [asdict(p) for p in ours],
                "peer": [asdict(p) for p in side.peer],
            }
            if not suffix:
                for measure, ok, tgt in (
                    ("wall", wall_ok, wall_target),
                    ("rss_mib", rss_ok, f"≤ {RSS_TARGET:g}"),
                ):
                    mm = m[measure]
                    unit = " s" if measure == "wall" else " MiB"
                    rows.append(
                        Row(
                            f"17 {backend}",
                            f"{backend} ÷ {peer_name}, "
                            + ("whole-run wall" if measure == "wall" else "peak RSS")
                            + ", fresh processes",
                            "n/a" if mm.ours is None else f"{mm.ours:,.2f}{unit}",
                            "n/a" if mm.peer is None else f"{mm.peer:,.2f}{unit}",
                            "n/a" if mm.ratio is None else f"{mm.ratio:.2f}",
                            tgt,
                            ok,
                            {},
                        )
                    )
    return rows, table, raw
