"""ArviZ's convergence statistics in plain NumPy, so the end of a run imports no ArviZ.

Importing ArviZ pulls in xarray, pandas and scipy.stats (seconds in a fresh process), more
than many whole runs cost. The formulas here are ArviZ 0.23's, line for line
(``arviz.stats.diagnostics``: ``_rhat_rank``, ``_ess_bulk``, ``_ess_tail``, ``_mcse_mean``,
``_bfmi``; ``arviz.stats.stats._hdi``; ``psislw`` with its ``_gpdfit``), on one
``(chains, draws)`` array each: rank
normalisation with average ranks and Blom's offset 3/8, split chains (first and last half),
Geyer's initial monotone sequence on the FFT autocovariance. The inverse normal CDF is
Wichura's AS241 (``statistics.NormalDist.inv_cdf``'s algorithm, ~1e-16 relative),
vectorised. A test checks every figure against ArviZ itself.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rhat_rank", "ess_bulk", "ess_tail", "mcse_mean", "hdi", "bfmi", "ndtri", "psislw"]

_MIN_DRAWS = 4


def _poly(coeffs: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    out = np.zeros_like(x)
    for c in coeffs:
        out = out * x + c
    return out


# AS241 PPND16 coefficients, highest power first (as Python's statistics module uses them).
_A = (
    2509.0809287301226727,
    33430.575583588128105,
    67265.770927008700853,
    45921.953931549871457,
    13731.693765509461125,
    1971.5909503065514427,
    133.14166789178437745,
    3.387132872796366608,
)
_B = (
    5226.495278852545925,
    28729.085735721942674,
    39307.89580009271061,
    21213.794301586595867,
    5394.1960214247511077,
    687.1870074920579083,
    42.313330701600911252,
    1.0,
)
_C = (
    7.7454501427834140764e-4,
    0.0227238449892691845833,
    0.24178072517745061177,
    1.27045825245236838258,
    3.64784832476320460504,
    5.7694972214606914055,
    4.6303378461565452959,
    1.42343711074968357734,
)
_D = (
    1.05075007164441684324e-9,
    5.475938084995344946e-4,
    0.0151986665636164571966,
    0.14810397642748007459,
    0.68976733498510000455,
    1.6763848301838038494,
    2.05319162663775882187,
    1.0,
)
_E = (
    2.01033439929228813265e-7,
    2.71155556874348757815e-5,
    0.0012426609473880784386,
    0.026532189526576123093,
    0.29656057182850489123,
    1.7848265399172913358,
    5.4637849111641143699,
    6.6579046435011037772,
)
_F = (
    2.04426310338993978564e-15,
    1.4215117583164458887e-7,
    1.8463183175100546818e-5,
    7.868691311456132591e-4,
    0.0148753612908506148525,
    0.13692988092273580531,
    0.59983220655588793769,
    1.0,
)


def ndtri(p: np.ndarray) -> np.ndarray:
    """The standard normal quantile of each ``p`` in ``(0, 1)`` (NaN elsewhere, ±inf at 0/1)."""
    p = np.asarray(p, dtype=float)
    q = p - 0.5
    out = np.full(p.shape, np.nan)
    central = np.abs(q) <= 0.425
    if central.any():
        qc = q[central]
        r = 0.180625 - qc * qc
        out[central] = qc * _poly(_A, r) / _poly(_B, r)
    tail = ~central & (p > 0) & (p < 1)
    if tail.any():
        qt, pt = q[tail], p[tail]
        r = np.sqrt(-np.log(np.where(qt <= 0, pt, 1.0 - pt)))
        near = r <= 5.0
        x = np.where(
            near,
            _poly(_C, r - 1.6) / _poly(_D, r - 1.6),
            _poly(_E, r - 5.0) / _poly(_F, r - 5.0),
        )
        out[tail] = np.where(qt < 0, -x, x)
    out[p == 0] = -np.inf
    out[p == 1] = np.inf
    return out


def _rank_average(a: np.ndarray) -> np.ndarray:
    """``scipy.stats.rankdata(a, method="average")`` of the flattened ``a``."""
    flat = a.ravel()
    sorter = np.argsort(flat, kind="mergesort")
    inv = np.empty(sorter.size, dtype=np.intp)
    inv[sorter] = np.arange(sorter.size, dtype=np.intp)
    s = flat[sorter]
    obs = np.r_[True, s[1:] != s[:-1]]
    dense = np.cumsum(obs)[inv]
    count = np.r_[np.nonzero(obs)[0], len(obs)]
    return np.asarray(0.5 * (count[dense] + count[dense - 1] + 1), dtype=float)


def _z_scale(a: np.ndarray) -> np.ndarray:
    rank = _rank_average(a)
    c = 3 / 8
    return ndtri((rank - c) / (rank.size - 2 * c + 1)).reshape(a.shape)


def _split(a: np.ndarray) -> np.ndarray:
    half = a.shape[1] // 2
    return np.vstack((a[:, :half], a[:, -half:]))


def _invalid(a: np.ndarray, min_chains: int) -> bool:
    return bool(np.isnan(a).any() or a.shape[0] < min_chains or a.shape[1] < _MIN_DRAWS)


def _rhat(a: np.ndarray) -> float:
    a = np.asarray(a, dtype=float)
    if np.isnan(a).any():
        return float("nan")
    n = a.shape[1]
    between = n * np.var(a.mean(axis=1), ddof=1)
    within = np.mean(np.var(a, axis=1, ddof=1))
    with np.errstate(divide="ignore", invalid="ignore"):  # constant draws: NaN, as ArviZ
        return float(np.sqrt((between / within + n - 1) / n))


def rhat_rank(a: np.ndarray) -> float:
    """Rank-normalised split R-hat (bulk and folded, the larger) of ``(chains, draws)``."""
    a = np.asarray(a)  # the draws' own dtype, as ArviZ folds them
    if _invalid(a, 2):
        return float("nan")
    s = _split(a)
    bulk = _rhat(_z_scale(s))
    tail = _rhat(_z_scale(np.abs(s - np.median(s))))
    return max(bulk, tail)


def _autocov(a: np.ndarray) -> np.ndarray:
    n = a.shape[1]
    m = 1 << int(2 * n - 1).bit_length()  # any length >= 2n - 1 gives the linear autocov
    c = a - a.mean(axis=1, keepdims=True)
    f = np.fft.rfft(c, n=m, axis=1)
    f *= np.conjugate(f)
    return np.fft.irfft(f, n=m, axis=1)[:, :n] / n


def _ess(a: np.ndarray) -> float:
    a = np.asarray(a, dtype=float)
    if np.isnan(a).any():
        return float("nan")
    if (np.max(a) - np.min(a)) < np.finfo(float).resolution:
        return float(a.size)
    n_chain, n_draw = a.shape
    acov = _autocov(a)
    mean_var = np.mean(acov[:, 0]) * n_draw / (n_draw - 1.0)
    var_plus = mean_var * (n_draw - 1.0) / n_draw
    if n_chain > 1:
        var_plus += np.var(a.mean(axis=1), ddof=1)
    rho = np.zeros(n_draw)
    even = 1.0
    rho[0] = even
    odd = 1.0 - (mean_var - np.mean(acov[:, 1])) / var_plus
    rho[1] = odd
    acov_mean = acov.mean(axis=0)
    t = 1
    while t < (n_draw - 3) and (even + odd) > 0.0:  # Geyer's initial positive sequence
        even = 1.0 - (mean_var - acov_mean[t + 1]) / var_plus
        odd = 1.0 - (mean_var - acov_mean[t + 2]) / var_plus
        if (even + odd) >= 0:
            rho[t + 1] = even
            rho[t + 2] = odd
        t += 2
    max_t = t - 2
    if even > 0:
        rho[max_t + 1] = even
    t = 1
    while t <= max_t - 2:  # Geyer's initial monotone sequence
        if (rho[t + 1] + rho[t + 2]) > (rho[t - 1] + rho[t]):
            rho[t + 1] = (rho[t - 1] + rho[t]) / 2.0
            rho[t + 2] = rho[t + 1]
        t += 2
    total = n_chain * n_draw
    tau = -1.0 + 2.0 * np.sum(rho[: max_t + 1]) + np.sum(rho[max_t + 1 : max_t + 2])
    tau = max(tau, 1 / np.log10(total))
    return float("nan") if np.isnan(rho).any() else float(total / tau)


def ess_bulk(a: np.ndarray) -> float:
    """Bulk ESS (rank-normalised split chains) of ``(chains, draws)``."""
    a = np.asarray(a)
    if _invalid(a, 1):
        return float("nan")
    return _ess(_z_scale(_split(a)))


def ess_tail(a: np.ndarray) -> float:
    """Tail ESS: the smaller ESS of the 5 % and 95 % quantile indicators."""
    a = np.asarray(a)
    if _invalid(a, 1):
        return float("nan")
    x = np.sort(a.ravel())
    out = []
    for prob in (0.05, 0.95):
        # R's type 7, as ArviZ's mquantiles(alphap=1, betap=1) computes it
        aleph = x.size * prob + 1 - prob
        k = int(np.floor(np.clip(aleph, 1, x.size - 1)))
        gamma = float(np.clip(aleph - k, 0, 1))
        q = (1.0 - gamma) * np.float64(x[k - 1]) + gamma * np.float64(x[k])
        out.append(_ess(_split((a <= q).astype(float))))
    return min(out)


def mcse_mean(a: np.ndarray) -> float:
    """The Monte Carlo standard error of the mean: sd / sqrt(ESS of the split chains)."""
    a = np.asarray(a)
    if _invalid(a, 1):
        return float("nan")
    return float(np.std(a, ddof=1) / np.sqrt(_ess(_split(a))))


def hdi(a: np.ndarray, prob: float) -> tuple[float, float]:
    """The narrowest interval holding ``prob`` of the flattened draws."""
    x = np.sort(np.asarray(a).ravel())
    inc = int(np.floor(prob * x.size))
    width = np.subtract(x[inc:], x[: x.size - inc], dtype=np.float64)
    if width.size == 0:
        raise ValueError("Too few elements for interval calculation. ")
    i = int(np.argmin(width))
    return float(x[i]), float(x[i + inc])


def bfmi(energy: np.ndarray) -> np.ndarray:
    """E-BFMI per chain of ``(chains, draws)`` energies."""
    e = np.atleast_2d(np.asarray(energy, dtype=float))
    num = np.square(np.diff(e, axis=1)).mean(axis=1)
    return np.asarray(num / np.var(e, axis=1, ddof=1))


def _gpd_fit(tail: np.ndarray) -> tuple[float, float]:
    """Generalised Pareto fit of sorted exceedances (Zhang & Stephens 2009, with ArviZ's weak
    prior on k): ``(k, sigma)``, ArviZ 0.23's ``_gpdfit``."""
    prior_bs, prior_k = 3, 10
    n = len(tail)
    m_est = 30 + int(n**0.5)
    b_ary = 1 - np.sqrt(m_est / (np.arange(1, m_est + 1, dtype=float) - 0.5))
    b_ary /= prior_bs * tail[int(n / 4 + 0.5) - 1]
    b_ary += 1 / tail[-1]
    k_ary = np.log1p(-b_ary[:, None] * tail).mean(axis=1)
    len_scale = n * (np.log(-(b_ary / k_ary)) - k_ary - 1)
    weights = 1 / np.exp(len_scale - len_scale[:, None]).sum(axis=1)
    real = weights >= 10 * np.finfo(float).eps
    if not np.all(real):
        weights, b_ary = weights[real], b_ary[real]
    weights /= weights.sum()
    b_post = float(np.sum(b_ary * weights))
    k_post = float(np.log1p(-b_post * tail).mean())
    sigma = -k_post / b_post
    k_post = (n * k_post + prior_k * 0.5) / (n + prior_k)
    return k_post, sigma


def _gpd_quantiles(probs: np.ndarray, k: float, sigma: float) -> np.ndarray:
    """Quantiles of the generalised Pareto distribution at ``probs`` in (0, 1)."""
    if sigma <= 0:
        return np.full_like(probs, np.nan)
    if abs(k) < np.finfo(float).eps:
        return -np.log1p(-probs) * sigma
    return np.expm1(-k * np.log1p(-probs)) / k * sigma


def psislw(log_weights: np.ndarray) -> tuple[np.ndarray, float]:
    """Pareto-smoothed importance sampling of one vector of log weights (``reff`` 1):
    ``(smoothed normalised log weights, k-hat)``, ArviZ 0.23's ``psislw``.

    The largest ``min(n / 5, 3 sqrt(n))`` weights are replaced by the quantiles of a
    generalised Pareto fit to them; its shape ``k`` says how heavy the tail is (Vehtari et
    al. 2024: above 0.7 the importance estimate is unreliable).
    """
    lw = np.array(log_weights, dtype=float).reshape(-1)
    n = lw.size
    cutoff_ind = -int(np.ceil(min(0.2 * n, 3 * np.sqrt(n)))) - 1
    cutoffmin = np.log(np.finfo(float).tiny)
    lw -= np.max(lw)
    xcutoff = max(float(np.sort(lw)[cutoff_ind]), cutoffmin)
    expxcutoff = np.exp(xcutoff)
    (tailinds,) = np.where(lw > xcutoff)
    x_tail = lw[tailinds]
    if len(x_tail) <= 4:
        k = np.inf
    else:
        order = np.argsort(x_tail)
        x_tail = np.exp(x_tail) - expxcutoff
        k, sigma = _gpd_fit(x_tail[order])
        if np.isfinite(k):
            probs = np.arange(0.5, len(x_tail)) / len(x_tail)
            smoothed = np.log(_gpd_quantiles(probs, k, sigma) + expxcutoff)
            x_tail[order] = smoothed
            x_tail[x_tail > 0] = 0
            lw[tailinds] = x_tail
    top = np.max(lw)
    lw -= top + np.log(np.sum(np.exp(lw - top)))
    return lw, float(k)
