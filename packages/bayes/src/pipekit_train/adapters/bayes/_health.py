"""The sampler-health checks Stan and PyMC users expect, beyond R-hat and ESS.

Computed from the draws and the per-draw sampler statistics (``STAT_KEYS``), each
with the likely cause and the fix in its message:

- tree-depth saturation: the share of draws whose NUTS tree reached ``max_tree_depth``
  (Stan's ``treedepth__`` check): the sampler stopped its trajectories early;
- E-BFMI per chain, ``arviz.bfmi`` of the energy (in NumPy: ``_stats.bfmi``; Stan's and
  PyMC's threshold 0.3):
  the momentum resampling cannot explore the energy levels (heavy tails, funnels);
- stuck chains: a chain whose draws changed in under ``STUCK_MOVE_FRACTION`` of its
  steps, or whose adapted step size warmup shrank below ``STEP_COLLAPSE`` of the other
  chains' (it was still stuck at the end of warmup: each step it takes is too small to
  leave), named with what the statistics measured (its step size and log density against
  the other chains') and the fix (another start, a bounded prior); and separated chains:
  chains that each move but sit far apart (a multimodal posterior or starts in different
  modes). The tree-depth and E-BFMI checks leave the stuck chains out (their figures are
  the stuck chain's, already named);
- where the divergences are: the site whose divergent draws lie farthest from the rest.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ._stats import bfmi

__all__ = [
    "collapsed_steps",
    "span",
    "health",
    "health_warnings",
    "EBFMI_MIN",
    "TREE_DEPTH_SHARE_MAX",
    "STUCK_MOVE_FRACTION",
    "STEP_COLLAPSE",
    "STEP_FLOOR",
    "SEPARATION_MIN",
]

#: E-BFMI below this (per chain) warns; Stan's and PyMC's threshold.
EBFMI_MIN = 0.3
#: Warn when more than this share of the draws saturated the tree depth (PyMC warns at
#: any; a single saturated draw in a thousand is no problem worth a warning).
TREE_DEPTH_SHARE_MAX = 0.01
#: A chain whose draws changed in fewer than this share of its steps is stuck.
STUCK_MOVE_FRACTION = 0.05
#: A chain whose adapted step size (the sampling phase's, fixed by warmup) is below this
#: share of the other chains' median was left stuck by warmup (measured: the ARMA(1,1) chain
#: NumPyro's uniform start leaves in its non-invertible region adapts 1.9e-16 against the
#: others' 0.28-0.71).
STEP_COLLAPSE = 1e-3
#: An adapted step size below this is collapsed whatever the other chains': no posterior a
#: float64 sampler can explore needs a step of 1e-8 in its (mass-matrix scaled) unconstrained
#: coordinates, and when every chain started in the flat tail (blackjax nuts on the ARMA from
#: uniform starts: 1.4e-41 to 1.6e-14) no chain is a yardstick for the others.
STEP_FLOOR = 1e-8
#: Chains are separated on a site when two chains' means differ by more than this many
#: within-chain sds (and R-hat is above its threshold).
SEPARATION_MIN = 4.0


def _flat_sites(samples: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Every scalar component as ``(chains, draws)``, named ``site`` or ``site[i]``."""
    out: dict[str, np.ndarray] = {}
    for name, value in samples.items():
        a = np.asarray(value, dtype=float)
        k = int(np.prod(a.shape[2:], dtype=np.int64))  # 0 for a site of size zero
        flat = a.reshape(a.shape[0], a.shape[1], k)
        if flat.shape[2] == 1 and a.ndim == 2:
            out[name] = flat[:, :, 0]
            continue
        for i in range(flat.shape[2]):
            idx = np.unravel_index(i, a.shape[2:])
            out[f"{name}[{','.join(str(j) for j in idx)}]"] = flat[:, :, i]
    return out


def _moves(flat: dict[str, np.ndarray]) -> np.ndarray:
    """Per chain: the share of steps in which any component changed."""
    stacked = np.stack(list(flat.values()), axis=-1)  # (chains, draws, k)
    if stacked.shape[1] < 2:
        return np.ones(stacked.shape[0])
    changed = np.any(stacked[:, 1:] != stacked[:, :-1], axis=-1)
    return np.asarray(changed.mean(axis=1), dtype=float)


def _separated(flat: dict[str, np.ndarray], stuck: list[int]) -> dict[str, float]:
    """Components whose moving chains' means differ by > SEPARATION_MIN within-chain sds."""
    out: dict[str, float] = {}
    for name, a in flat.items():
        keep = [c for c in range(a.shape[0]) if c not in stuck]
        if len(keep) < 2 or a.shape[1] < 2:
            continue
        means = a[keep].mean(axis=1)
        within = float(np.sqrt(np.mean(a[keep].var(axis=1, ddof=1))))
        if not np.isfinite(within) or within <= 0:
            continue
        gap = float((means.max() - means.min()) / within)
        if gap > SEPARATION_MIN:
            out[name] = gap
    return out


def _divergence_site(
    flat: dict[str, np.ndarray], diverging: np.ndarray
) -> tuple[str, float, float, bool] | None:
    """The component whose divergent draws lie farthest (in sds) from all draws: its name,
    the divergent draws' mean, every draw's mean, and whether all its draws are positive
    (a scale: divergences at its low end are a funnel's neck)."""
    mask = np.asarray(diverging, dtype=bool).reshape(-1)
    if not mask.any() or mask.all():
        return None
    best: tuple[str, float, float, bool] | None = None
    score = 0.5  # below half an sd the divergences are spread, not located
    for name, a in flat.items():
        v = a.reshape(-1)
        sd = float(v.std())
        if not np.isfinite(sd) or sd <= 0:
            continue
        d = abs(float(v[mask].mean()) - float(v.mean())) / sd
        if d > score:
            score, best = d, (name, float(v[mask].mean()), float(v.mean()), bool(np.all(v > 0)))
    return best


def collapsed_steps(step_sizes: Any) -> list[int]:
    """The chains whose adapted step size is below ``STEP_FLOOR``, or below ``STEP_COLLAPSE``
    of the other chains' median (or not finite while theirs are): warmup left them stuck
    where they started."""
    first = np.asarray(step_sizes, dtype=float).reshape(-1)
    out = []
    for c in range(first.size):
        others = np.delete(first, c)
        relative = bool(others.size) and bool(np.all(np.isfinite(others)))
        if first[c] < STEP_FLOOR or (
            relative and not first[c] >= STEP_COLLAPSE * float(np.median(others))
        ):
            out.append(c)
    return out


def _warmup_end(stats: Mapping[str, np.ndarray], moves: np.ndarray) -> dict[str, Any]:
    """Where warmup left each chain: its adapted step size (the first draw's; warmup fixes it)
    and its median log density, and the chains stuck at the end of warmup, by index: those
    that never moved, and those whose step size collapsed (``collapsed_steps``: each step too
    small to leave where they started)."""
    chains = len(moves)
    stuck = {int(c) for c in np.flatnonzero(moves < STUCK_MOVE_FRACTION)}
    out: dict[str, Any] = {}
    step = stats.get("step_size")
    if step is not None and step.ndim == 2 and step.shape[0] == chains and step.shape[1]:
        first = np.asarray(step[:, 0], dtype=float)
        out["step_size"] = [float(f"{v:.3g}") for v in first]
        stuck.update(collapsed_steps(first))
    lp = stats.get("lp")
    if lp is not None and lp.ndim == 2 and lp.shape[0] == chains and lp.shape[1]:
        out["lp"] = [float(f"{v:.6g}") for v in np.median(np.asarray(lp, dtype=float), axis=1)]
    out["stuck"] = sorted(stuck)
    return out


def health(
    samples: Mapping[str, Any],
    sample_stats: Mapping[str, Any] | None,
    *,
    max_tree_depth: int | None = None,
) -> dict[str, Any]:
    """JSON-able health figures of an MCMC run (``(chains, draws, …)`` draws and stats)."""
    stats = {k: np.asarray(v) for k, v in (sample_stats or {}).items()}
    flat = _flat_sites(samples)
    moves = _moves(flat) if flat else np.ones(0)
    warmup = _warmup_end(stats, moves)
    stuck = warmup.pop("stuck")
    out: dict[str, Any] = {
        "chain_move_fraction": [round(float(m), 4) for m in moves],
        "stuck_chains": stuck,
        "warmup_end": warmup,
        "separated": {k: round(v, 2) for k, v in _separated(flat, stuck).items()},
    }
    moving = [c for c in range(len(moves)) if c not in stuck]
    depth = stats.get("tree_depth")
    if depth is not None and max_tree_depth is not None:
        out["max_tree_depth"] = int(max_tree_depth)
        out["tree_depth_saturated"] = int(np.sum(np.asarray(depth)[moving] >= max_tree_depth))
    energy = stats.get("energy")
    if energy is not None and energy.ndim == 2 and energy.shape[1] > 2:
        out["e_bfmi"] = [float(b) if c in moving else None for c, b in enumerate(bfmi(energy))]
    diverging = stats.get("diverging")
    located = _divergence_site(flat, diverging) if diverging is not None else None
    if located is not None:
        out["divergences_at"] = {
            "site": located[0],
            "mean": located[1],
            "overall": located[2],
            "positive": located[3],
        }
    return out


def health_warnings(diag: Mapping[str, Any], rhat_max: float) -> tuple[list[str], set[str]]:
    """The messages the health figures call for, and the sites whose R-hat they explain
    (so the generic "run longer" R-hat advice is not given for them)."""
    out: list[str] = []
    explained: set[str] = set()
    chains, draws = diag["num_chains"], diag["num_draws"]
    stuck = diag.get("stuck_chains") or []
    if stuck:
        which = ", ".join(str(c) for c in stuck)
        out.append(
            f"chain(s) {which} never moved away from its start, still stuck at the end of "
            "warmup. "
            f"{_stuck_cause(diag, stuck)}. Their draws are not the posterior's and no "
            "number of draws fixes it. Start them elsewhere: backend_options.init_values "
            "(jittered per chain) or init_strategy ('screened', 'median'), and check the "
            "model's support. Where the density is flat to rounding far from the posterior "
            "(an ARMA / MA term outside its invertible region, |theta| > 1, makes the error "
            "recursion explode), bound the prior there (theta ~ Uniform(-1, 1)) or give "
            "init_values inside it"
        )
        explained |= set(diag["sites"])
    separated = diag.get("separated") or {}
    if chains > 1 and separated:
        bad = {n for n in separated if _site_of(n) in _high_rhat(diag, rhat_max)}
        if bad:
            shown = ", ".join(f"{n} ({separated[n]:.0f} sd apart)" for n in sorted(bad)[:5])
            out.append(
                f"the chains sit apart on {shown}: each chain moves but they disagree, so the "
                "posterior is multimodal or the chains started in different modes; running "
                "longer rarely helps. Start them together (backend_options.init_values, "
                "init_strategy), or remove the symmetry (an ordering constraint against label "
                "switching) or reparameterise"
            )
            explained |= {_site_of(n) for n in bad}
    saturated = diag.get("tree_depth_saturated")
    counted = (chains - len(stuck)) * draws  # the stuck chains' draws are left out
    if saturated and counted and saturated > TREE_DEPTH_SHARE_MAX * counted:
        share = saturated / counted
        out.append(
            f"{saturated} of {counted} draws ({share:.0%}) reached the maximum tree "
            f"depth {diag['max_tree_depth']}: NUTS cut those trajectories short, so the "
            "chains explore slowly (an efficiency, not a validity, concern). Raise "
            "backend_options.max_tree_depth, or reparameterise / use dense_mass for a badly "
            "scaled or correlated posterior"
        )
    bfmi = diag.get("e_bfmi")
    if bfmi:
        low = [(c, b) for c, b in enumerate(bfmi) if b is not None and b < EBFMI_MIN]
        if low:
            shown = ", ".join(f"chain {c} ({b:.2f})" for c, b in low)
            out.append(
                f"E-BFMI below {EBFMI_MIN} for {shown}: the momentum resampling cannot reach "
                "the energy levels the posterior needs (heavy tails or a funnel), so the "
                "draws may be biased; reparameterise a hierarchy in the non-centred form "
                "(numpyro's LocScaleReparam: handlers.reparam(model, config={'theta': "
                "LocScaleReparam(0)})) or use a lighter-tailed prior"
            )
    return out, explained


def _stuck_cause(diag: Mapping[str, Any], stuck: list[int]) -> str:
    """What the statistics measured about the stuck chains: how little each moved, the step
    size warmup left it and its log density, against the other chains'."""
    moved = diag.get("chain_move_fraction") or []
    end = diag.get("warmup_end") or {}
    step: list[float] = end.get("step_size") or []
    lp: list[float] = end.get("lp") or []
    others = [c for c in range(len(moved)) if c not in stuck]
    parts = []
    for c in stuck:
        said = [f"chain {c} moved in {moved[c]:.0%} of its draws"] if c < len(moved) else []
        if step:
            said.append(f"warmup left its step size at {step[c]:.3g}")
        if lp:
            said.append(f"its log density at {lp[c]:.6g}")
        parts.append(", ".join(said))
    if others and step:
        parts.append(f"the other chains' step sizes are {span([step[o] for o in others])}")
    if others and lp:
        parts.append(f"their log densities {span([lp[o] for o in others])}")
    cause = "; ".join(parts)
    cause = cause[:1].upper() + cause[1:]
    collapsed = bool(step) and bool(set(collapsed_steps(step)) & set(stuck))
    if collapsed:
        cause += (
            ": warmup shrank the step to stay where the chain started, a region it cannot "
            "leave at any step size (a bad start, not too short a run)"
        )
    else:
        cause += ": most likely a bad start (a region it cannot leave at the adapted step size)"
    return cause


def span(values: list[float], fmt: str = ".3g") -> str:
    """The range of the other chains' figures in words: ``"0.28"`` or ``"0.28 to 0.71"``."""
    lo, hi = format(min(values), fmt), format(max(values), fmt)
    return lo if lo == hi else f"{lo} to {hi}"


def _site_of(component: str) -> str:
    return component.split("[", 1)[0]


def _high_rhat(diag: Mapping[str, Any], rhat_max: float) -> set[str]:
    out = set()
    for name, s in diag["sites"].items():
        a = np.asarray(s.get("r_hat", []), dtype=float).ravel()
        a = a[np.isfinite(a)]
        if a.size and float(a.max()) > rhat_max:
            out.add(name)
    return out
