"""Whether a fitted guide can be trusted: ELBO convergence, PSIS k-hat, and the guide's spread.

A variational fit has no R-hat: its draws are independent by construction, so the
posterior table alone cannot say whether the guide found the posterior. Three checks can,
each computed here from numbers the backend hands in (no inference library needed):

- **the ELBO is still moving**: over the run's logged windows (the driver's ``history``),
  the loss of the last tenth is lower than the tenth before it by more than three
  standard errors (the window means' noise from their successive differences) *and* by
  more than ``ELBO_REL_TOL`` of its size (Stan's ADVI stops at a relative change of 0.01;
  this is ten times stricter);
- **Pareto k-hat** of the importance weights ``log p(x, z) - log q(z)`` of the guide's
  draws (PSIS, Yao et al. 2018; ``_stats.psislw``, ArviZ's in NumPy): above ``KHAT_MAX``
  (0.7) the guide misses mass the posterior has, and its means and sds cannot be trusted;
- **the guide's spread**: each latent component's sd under the guide against its
  importance-weighted (PSIS) sd; a guide narrower than ``SD_RATIO_MIN`` of it has
  collapsed (mean-field guides do this on correlated or funnel-shaped posteriors).

"OK" is said only when every check ran and passed (``_report``'s health line).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ._guides import STANDARDIZED_GUIDE as STANDARDIZED
from ._health import _flat_sites
from ._stats import psislw

__all__ = [
    "ELBO_REL_TOL",
    "KHAT_MAX",
    "SD_RATIO_MIN",
    "elbo_convergence",
    "importance_check",
    "variational_warnings",
]

#: Pareto k-hat above this: importance sampling from the guide is unreliable, so the guide
#: misses the posterior (the threshold of Vehtari et al. and ArviZ).
KHAT_MAX = 0.7
#: A component whose guide sd is below this share of its importance-weighted sd collapsed.
SD_RATIO_MIN = 0.5
#: With k-hat above ``KHAT_MAX``: a component whose importance-weighted mean lies more than
#: this many guide sds from the guide's mean shows where the guide stopped short of the
#: posterior (a start far from it on a badly scaled parameter; the weighted mean is only a
#: pointer there, not an estimate).
SHIFT_MIN = 1.0
#: With k-hat at most ``KHAT_MAX`` the weighted means can be trusted: a component whose guide
#: mean lies more than this many guide sds from its weighted mean (and more than three
#: standard errors of that difference) ended off the optimum, a fit the other checks pass
#: (measured: sblri-blr at defaults, 0.36 reference sds off with k-hat below 0.7).
OFF_MEAN_MIN = 0.25
#: The guides a "richer guide" cannot improve on among the autoguides' Gaussians.
FULL_RANK = ("AutoMultivariateNormal", "AutoLaplaceApproximation", STANDARDIZED)
#: The last tenth's loss lower than the tenth before by more than this share of its size
#: (and by three standard errors): the ELBO is still moving.
ELBO_REL_TOL = 1e-3
#: Fewer logged windows than this: convergence is not checked.
MIN_WINDOWS = 4


def elbo_convergence(history: Sequence[tuple[int, float]]) -> dict[str, Any]:
    """Whether the loss has stopped improving, from ``(step, mean loss)`` per logged window.

    Returns ``{"checked": False, "windows": n}`` when there are fewer than ``MIN_WINDOWS``
    windows, else ``checked``, ``moving``, the two tenths' mean losses, their steps and the
    improvement with its standard error.
    """
    values = [(int(s), float(v)) for s, v in history if math.isfinite(float(v))]
    n = len(values)
    if n < MIN_WINDOWS:
        return {"checked": False, "windows": n}
    m = max(2, n // 10)
    last = np.array([v for _, v in values[-m:]])
    before = np.array([v for _, v in values[-2 * m : -m]])
    improvement = float(before.mean() - last.mean())
    # The noise of one window's mean, from the successive differences over the run's last
    # half: half their variance (a linear trend only shifts their mean, so it does not
    # enter), resting on more windows than the two tenths alone.
    tail = np.array([v for _, v in values[-max(2 * m, n // 2) :]])
    noise = float(np.var(np.diff(tail), ddof=1) / 2.0) if len(tail) > 2 else 0.0
    se = math.sqrt(noise * (1.0 / len(last) + 1.0 / len(before)))
    scale = max(1.0, abs(float(last.mean())))
    moving = improvement > 3.0 * se and improvement > ELBO_REL_TOL * scale
    return {
        "checked": True,
        "moving": bool(moving),
        "windows": n,
        "last_loss": float(last.mean()),
        "before_loss": float(before.mean()),
        "improvement": improvement,
        "improvement_se": se,
        "from_step": values[-2 * m][0],
        "to_step": values[-1][0],
    }


def importance_check(log_weights: Any, draws: Mapping[str, Any]) -> dict[str, Any]:
    """PSIS of the guide's draws: k-hat, and each component's guide sd ÷ weighted sd.

    ``log_weights``: ``log p(x, z_s) - log q(z_s)`` of ``S`` guide draws ``z_s``;
    ``draws``: the latent sites' values of the same draws, ``(S, …)`` each.
    """
    lw = np.asarray(log_weights, dtype=float).reshape(-1)
    finite = np.isfinite(lw)
    out: dict[str, Any] = {"num_draws": int(lw.size), "nonfinite": int((~finite).sum())}
    if lw.size < 2 or not finite.all():
        # A guide draw where the model's density is not finite (outside its support, or an
        # overflow): the guide puts mass where the posterior has none; k-hat is infinite,
        # recorded as None with the count (JSON has no infinity).
        out["khat"] = None
        out["narrow"] = {}
        return out
    smoothed, khat = psislw(lw)
    out["khat"] = float(khat)
    w = np.exp(np.asarray(smoothed) - np.max(smoothed))
    w = w / w.sum()
    narrow: dict[str, float] = {}
    shifted: dict[str, float] = {}
    off: dict[str, float] = {}
    ess = 1.0 / float(np.sum(w**2))  # the weights' effective sample size
    # Every scalar component, named as the health checks name them (``site[i]``).
    components = _flat_sites({k: np.asarray(v)[None] for k, v in draws.items()})
    for name, chain in components.items():
        z = chain[0]
        mean_w = float(np.sum(w * z))
        sd_w = math.sqrt(max(float(np.sum(w * (z - mean_w) ** 2)), 0.0))
        sd_q = float(z.std())
        if sd_w > 0 and math.isfinite(sd_w) and sd_q / sd_w < SD_RATIO_MIN:
            narrow[name] = sd_q / sd_w
        if not sd_q > 0:  # a point-mass component (AutoDelta, a fixed site): no spread
            continue
        shift = abs(mean_w - float(z.mean())) / sd_q
        if not math.isfinite(shift):
            continue
        if khat > KHAT_MAX and shift > SHIFT_MIN:
            shifted[name] = shift
        # The weighted mean's standard error, in guide sds: sd_w / sqrt(ESS).
        elif khat <= KHAT_MAX and shift > max(OFF_MEAN_MIN, 3.0 * sd_w / sd_q / math.sqrt(ess)):
            off[name] = shift
    out["narrow"] = dict(sorted(narrow.items(), key=lambda kv: kv[1])[:20])
    out["shifted"] = dict(sorted(shifted.items(), key=lambda kv: -kv[1])[:20])
    out["off_mean"] = dict(sorted(off.items(), key=lambda kv: -kv[1])[:20])
    out["ess"] = round(ess, 1)
    return out


def variational_warnings(health: Mapping[str, Any]) -> list[str]:
    """The health line's problems for a fitted guide (empty when every check passed)."""
    out: list[str] = []
    conv = health.get("elbo_convergence") or {}
    if conv.get("moving"):
        out.append(
            f"the ELBO is still moving: the loss fell {conv['improvement']:.4g} "
            f"(± {conv['improvement_se']:.2g}) from one tenth of the run to the next, up to "
            f"step {conv['to_step']}, so the guide has not converged; train longer (max_steps) "
            "or raise the learning rate (optimizer_config.lr), and standardise badly scaled "
            "data or parameters"
        )
    imp = health.get("importance") or {}
    khat = imp.get("khat")
    infinite = bool(imp.get("nonfinite"))
    if infinite or (khat is not None and not khat <= KHAT_MAX):
        shown = "infinite" if infinite else f"{khat:.2f}"
        where = (
            f" ({imp['nonfinite']} of {imp['num_draws']} guide draws have a non-finite "
            "model density)"
            if imp.get("nonfinite")
            else ""
        )
        out.append(
            f"Pareto k-hat of the guide's importance weights is {shown} > {KHAT_MAX}{where} "
            f"(PSIS, {imp.get('num_draws')} draws): the guide misses the posterior, so its "
            f"means and sds may be wrong{_shift_finding(imp)}. {_khat_fix(health, imp)}"
        )
    off = imp.get("off_mean") or {}
    if off and khat is not None and khat <= KHAT_MAX:
        shown = ", ".join(f"{n} ({v:.2f})" for n, v in list(off.items())[:5])
        out.append(
            f"the guide's means sit off their importance-weighted means for {shown} guide sds "
            f"(PSIS k-hat {khat:.2f} <= {KHAT_MAX}, so the weighted means can be trusted): the "
            "fit ended off the optimum, typically the last steps' gradient noise on a "
            "parameter the posterior pins tightly. Decay the learning rate to a smaller final "
            "value (an optimizer_config.lr schedule) or train longer, and standardise badly "
            "scaled parameters"
        )
    narrow = imp.get("narrow") or {}
    if narrow and khat is not None and khat <= KHAT_MAX:
        shown = ", ".join(f"{n} ({r:.2f})" for n, r in list(narrow.items())[:5])
        fix = (
            "a full-rank Gaussian's limit, typically a funnel or a skewed scale parameter; "
            "reparameterise (non-centred, LocScaleReparam) or sample with numpyro-mcmc"
            if health.get("guide") in FULL_RANK
            else "typically a mean-field guide on correlated parameters; use "
            "task.guide=None (the standardised full-rank guide), 'AutoMultivariateNormal' or "
            "'AutoLowRankMultivariateNormal', or reparameterise (non-centred, "
            "LocScaleReparam)"
        )
        out.append(
            f"the guide's sds collapsed for {shown} (its sd ÷ the importance-weighted sd, "
            f"below {SD_RATIO_MIN}): the guide is too narrow there, {fix}"
        )
    return out


def _shift_finding(imp: Mapping[str, Any]) -> str:
    """Where the importance weights move the guide's means, in guide sds (empty if nowhere)."""
    shifted = imp.get("shifted") or {}
    if not shifted:
        return ""
    shown = ", ".join(f"{n} by {v:.1f}" for n, v in list(shifted.items())[:3])
    return (
        f"; the weights move the means of {shown} guide sds, so the fit stopped short of "
        "the posterior there"
    )


def _khat_fix(health: Mapping[str, Any], imp: Mapping[str, Any]) -> str:
    """The fix for a high k-hat, for the guide that was fitted: a start nearer the posterior
    where the means fell short (else standardised predictors), and a richer guide only where
    one exists."""
    guide = health.get("guide")
    if guide == STANDARDIZED:  # already standardised and started at the mode
        first = (
            "Train longer (max_steps), at a lower final learning rate"
            if imp.get("shifted")
            else "The posterior is not Gaussian around its mode"
        )
    elif imp.get("shifted"):
        first = (
            "Standardise the badly scaled parameters (scale the predictors so the coefficients "
            "are of order one), start the guide nearer the posterior (an autoguide's "
            "init_loc_fn=init_to_value(values=...)) or train longer at a higher learning rate"
        )
    else:
        first = "Standardise the predictors"
    if guide in FULL_RANK:
        then = (
            f"a Gaussian guide cannot do better than {guide}'s full covariance, so "
            "reparameterise a hierarchy (the non-centred form, numpyro's LocScaleReparam) or "
            "sample with numpyro-mcmc"
        )
    else:
        then = (
            "use a richer guide (task.guide=None, the standardised full-rank guide, "
            "'AutoMultivariateNormal', or 'AutoLowRankMultivariateNormal' for many latents), "
            "reparameterise a hierarchy "
            "(the non-centred form, numpyro's LocScaleReparam), or check the fit with "
            "numpyro-mcmc"
        )
    return f"{first}; {then}"
