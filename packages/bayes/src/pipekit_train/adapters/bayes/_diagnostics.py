"""Convergence diagnostics: ArviZ's figures, computed without importing ArviZ.

Rank-normalised split R-hat, bulk and tail ESS, the MCSE of the mean and the HDI are
``arviz.rhat(method="rank")``, ``arviz.ess(method="bulk"|"tail")``,
``arviz.mcse(method="mean")`` and ``arviz.hdi``, ported to NumPy in ``_stats`` (ArviZ
imports xarray, pandas and scipy.stats: seconds in a fresh process, more than many whole
runs; a test checks the port against ArviZ); divergences are the sampler's own flags.
ArviZ itself is imported only on request: ``to_inference_data``, summaries and plots.
The warning thresholds follow PyMC: R-hat > 1.01, bulk ESS < 100 per chain,
any divergence. The sampler-health checks (tree-depth saturation, E-BFMI, stuck and
separated chains, where the divergences are) live in ``_health``; their figures join
the same dictionary and their messages the same ``warnings`` list.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

import numpy as np

from pipekit_train.errors import warn_user

from ._health import health, health_warnings
from ._stats import ess_bulk, ess_tail, hdi, mcse_mean, rhat_rank

__all__ = [
    "to_inference_data",
    "diagnostics",
    "variational_summary",
    "HDI_PROB",
    "diagnostic_warnings",
    "warn_diagnostics",
    "RHAT_MAX",
    "ESS_PER_CHAIN_MIN",
]

RHAT_MAX = 1.01
ESS_PER_CHAIN_MIN = 100
#: The highest-density interval's mass, ArviZ's default (``arviz.summary``'s ``hdi_3%`` /
#: ``hdi_97%`` columns).
HDI_PROB = 0.94


def _quiet_arviz() -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        import arviz as az
    return az


def to_inference_data(
    samples: Mapping[str, Any],
    *,
    diverging: Any = None,
    sample_stats: Mapping[str, Any] | None = None,
) -> Any:
    """An ``arviz.InferenceData`` from draws grouped by chain (``(chains, draws, …)``)."""
    az = _quiet_arviz()
    stats = {k: np.asarray(v) for k, v in (sample_stats or {}).items()}
    if diverging is not None:
        stats["diverging"] = np.asarray(diverging, dtype=bool)
    posterior = {k: np.asarray(v) for k, v in samples.items()}
    return az.from_dict(posterior=posterior, sample_stats=stats or None)


def _components(draws: np.ndarray) -> np.ndarray:
    """``(chains, draws, k)``: every scalar component of a site (``k`` may be 0: a site of
    size 0, such as the coefficients of a regression on no covariates)."""
    return draws.reshape(draws.shape[:2] + (int(np.prod(draws.shape[2:], dtype=np.int64)),))


def _moments(draws: np.ndarray) -> dict[str, Any]:
    """``mean``, ``sd`` (ddof = 1) and ``nonfinite`` of one site's ``(chains, draws, …)`` array."""
    flat = draws.reshape((draws.shape[0] * draws.shape[1],) + draws.shape[2:])
    return {
        "mean": flat.mean(axis=0).tolist(),
        "sd": (
            flat.std(axis=0, ddof=1) if flat.shape[0] > 1 else np.zeros(flat.shape[1:])
        ).tolist(),
        "nonfinite": int(flat.size - np.count_nonzero(np.isfinite(flat))),
    }


def _per_component(draws: np.ndarray, fn: Any) -> Any:
    """``fn`` of each scalar component's ``(chains, draws)`` array, as nested lists."""
    shape = tuple(draws.shape[2:])
    flat = _components(draws)
    with np.errstate(all="ignore"):  # inf draws: NaN figures, counted and warned elsewhere
        values = np.array([fn(flat[:, :, i]) for i in range(flat.shape[2])], dtype=np.float64)
    return values.reshape(shape).tolist()


def _hdi_bounds(draws: np.ndarray) -> tuple[Any, Any]:
    """The ``HDI_PROB`` highest-density interval of each component as ``(low, high)``."""
    shape = tuple(draws.shape[2:])
    flat = _components(draws)
    with np.errstate(all="ignore"):
        pairs = [hdi(flat[:, :, i], HDI_PROB) for i in range(flat.shape[2])]
    dtype = draws.dtype if draws.dtype.kind == "f" else np.float64
    low = np.array([p[0] for p in pairs], dtype=dtype).reshape(shape)
    high = np.array([p[1] for p in pairs], dtype=dtype).reshape(shape)
    return low.tolist(), high.tolist()


def variational_summary(samples: Mapping[str, Any]) -> dict[str, Any]:
    """Per-site ``mean``, ``sd``, ``hdi_low`` / ``hdi_high`` and ``nonfinite`` of independent
    draws from a fitted guide (``(1, draws, …)``); ``kind`` is ``"variational"``.

    R-hat and ESS are left out: the draws are independent by construction, so they would
    only describe the guide, not whether the fit found the posterior.
    """
    sites = {}
    for name, value in samples.items():
        draws = np.asarray(value)
        low, high = _hdi_bounds(draws)
        sites[name] = {**_moments(draws), "hdi_low": low, "hdi_high": high}
    num_chains, num_draws = next(iter(np.asarray(v).shape[:2] for v in samples.values()))
    return {
        "kind": "variational",
        "sites": sites,
        "num_chains": int(num_chains),
        "num_draws": int(num_draws),
        "hdi_prob": HDI_PROB,
    }


def diagnostics(
    samples: Mapping[str, Any],
    diverging: Any = None,
    *,
    sample_stats: Mapping[str, Any] | None = None,
    max_tree_depth: int | None = None,
) -> dict[str, Any]:
    """Per-site ``mean``, ``sd``, ``hdi_low`` / ``hdi_high`` (the ``HDI_PROB`` interval),
    ``r_hat``, ``ess_bulk``, ``ess_tail``, ``mcse_mean`` (nested lists, JSON-able),
    ``nonfinite`` (how many values are NaN or infinite) and the total ``divergences``;
    ``kind`` is ``"mcmc"``. The health figures of ``_health.health`` join them:
    ``chain_move_fraction``, ``stuck_chains``, ``separated``, and with the sampler
    statistics ``tree_depth_saturated`` / ``max_tree_depth``, ``e_bfmi`` (per chain) and
    ``divergences_at``.

    ``samples`` are grouped by chain, ``(chains, draws, …)``; ``sd`` uses ddof = 1.
    ``sample_stats`` are the per-draw statistics (``STAT_KEYS``), ``max_tree_depth`` the
    NUTS limit the run used (tree-depth saturation is only judged with it). The figures
    equal ArviZ's (``_stats``); no ArviZ, xarray or pandas is imported.
    """
    sites: dict[str, Any] = {}
    for name, value in samples.items():
        draws = np.asarray(value)
        moments = _moments(draws)
        low, high = _hdi_bounds(draws)
        sites[name] = {
            "mean": moments["mean"],
            "sd": moments["sd"],
            "hdi_low": low,
            "hdi_high": high,
            "r_hat": _per_component(draws, rhat_rank),
            "ess_bulk": _per_component(draws, ess_bulk),
            "ess_tail": _per_component(draws, ess_tail),
            "mcse_mean": _per_component(draws, mcse_mean),
            "nonfinite": moments["nonfinite"],
        }
    num_chains, num_draws = next(iter(np.asarray(v).shape[:2] for v in samples.values()))
    stats = dict(sample_stats or {})
    if diverging is not None:
        stats["diverging"] = diverging
    return {
        "kind": "mcmc",
        "hdi_prob": HDI_PROB,
        "sites": sites,
        "num_chains": int(num_chains),
        "num_draws": int(num_draws),
        "divergences": int(np.asarray(diverging).sum()) if diverging is not None else 0,
        **health(samples, stats, max_tree_depth=max_tree_depth),
    }


def _worst(values: Any, pick: Any) -> float:
    a = np.asarray(values, dtype=float).ravel()
    a = a[np.isfinite(a)]
    return float(pick(a)) if a.size else float("nan")


def _and(items: list[str]) -> str:
    """``"a"``, ``"a and b"``, ``"a, b and c"``."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def diagnostic_warnings(diag: Mapping[str, Any]) -> list[str]:
    """The warnings a run's diagnostics call for (empty when it looks converged)."""
    out: list[str] = []
    broken = {n: s["nonfinite"] for n, s in diag["sites"].items() if s.get("nonfinite")}
    if broken:
        sites = ", ".join(f"{n} ({k})" for n, k in sorted(broken.items()))
        out.append(
            f"draws that are NaN or infinite for {sites}: the sampler diverged, and every "
            "statistic of those sites is meaningless; lower the step size "
            "(backend_options.step_size) or start nearer the posterior"
        )
    if diag.get("kind") == "variational":
        return out  # independent draws from a guide: R-hat, ESS and divergences do not apply
    chains = diag["num_chains"]
    explained_msgs, explained = health_warnings(diag, RHAT_MAX)
    if chains > 1:
        bad = {
            n: _worst(s["r_hat"], np.max)
            for n, s in diag["sites"].items()
            if _worst(s["r_hat"], np.max) > RHAT_MAX and n not in explained
        }
        if bad:
            sites = ", ".join(f"{n} ({v:.3f})" for n, v in sorted(bad.items()))
            out.append(
                f"R-hat above {RHAT_MAX} for {sites}: the chains disagree; run longer "
                "(num_warmup, num_samples) or reparameterise the model"
            )
    out.extend(explained_msgs)
    floor = ESS_PER_CHAIN_MIN * chains
    low = {
        n: _worst(s["ess_bulk"], np.min)
        for n, s in diag["sites"].items()
        if _worst(s["ess_bulk"], np.min) < floor
    }
    if low:
        sites = _and([f"{n} ({v:.0f})" for n, v in sorted(low.items())])
        verb = "has" if len(low) == 1 else "have"
        chains_text = "1 chain needs" if chains == 1 else f"{chains} chains need"
        out.append(
            f"{sites} {verb} a bulk ESS below the {floor} that {chains_text} "
            f"({ESS_PER_CHAIN_MIN} per chain), so the estimates are unreliable; draw more "
            "samples (num_samples) or reparameterise the model"
        )
    if diag.get("divergences", 0):
        where = ""
        at = diag.get("divergences_at")
        if at:
            side = "low" if at["mean"] < at["overall"] else "high"
            where = (
                f", concentrated where {at['site']} is {side} (divergent draws' mean "
                f"{at['mean']:.3g} against {at['overall']:.3g} over all draws)"
            )
        fix = (
            "raise target_accept (backend_options) or reparameterise the model there "
            "(e.g. non-centred)"
        )
        if at and at.get("positive") and at["mean"] < at["overall"]:
            # Divergences where a positive scale is small: the neck of a centred hierarchy.
            fix = (
                f"this is a funnel's neck ({at['site']} is a scale, the divergences sit where "
                "it is small): write the hierarchy in the non-centred form, e.g. numpyro's "
                f"LocScaleReparam on the sites {at['site'].split('[')[0]} scales "
                "(handlers.reparam(model, config={'theta': LocScaleReparam(0)})); raising "
                "target_accept only shrinks the step"
            )
        out.append(
            f"{diag['divergences']} divergent transition(s) after warmup{where}: the "
            f"posterior may be biased; {fix}"
        )
    return out


def warn_diagnostics(diag: Mapping[str, Any], backend: str) -> list[str]:
    """Emit each of :func:`diagnostic_warnings` as a ``UserWarning``; return them."""
    msgs = diagnostic_warnings(diag)
    for msg in msgs:
        warn_user(f"{backend}: {msg}")
    return msgs
