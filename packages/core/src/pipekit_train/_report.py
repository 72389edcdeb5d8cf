"""The end-of-run report of a Bayesian run: a posterior table and one health line.

Built from ``backend_info`` alone (plain numbers and lists, no array library), so the CLI
prints it for any backend whose ``backend_info["diagnostics"]`` follows the Bayesian layer's
schema (``pipekit_train.adapters.bayes.diagnostics`` for samplers, ``variational_summary``
for SVI): per site ``mean``, ``sd``, ``hdi_low`` / ``hdi_high`` and, for samplers, ``r_hat``,
``ess_bulk``, ``ess_tail``; the run's ``warnings`` say what is wrong and what to change.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

__all__ = ["posterior_report", "MAX_ELEMENTS_PER_SITE"]

#: A vector site shows its first elements only; ``op.summary()`` has them all.
MAX_ELEMENTS_PER_SITE = 10

_SAMPLER_COLUMNS = ("mean", "sd", "hdi_low", "hdi_high", "r_hat", "ess_bulk", "ess_tail")
_VARIATIONAL_COLUMNS = ("mean", "sd", "hdi_low", "hdi_high")


def _elements(value: Any, index: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Any]]:
    """``(index, scalar)`` of a nested list in row-major order (a scalar yields ``((), x)``)."""
    if isinstance(value, Sequence) and not isinstance(value, str):
        for i, item in enumerate(value):
            yield from _elements(item, (*index, i))
    else:
        yield index, value


def _cell(column: str, value: Any) -> str:
    if value is None:
        return "-"
    x = float(value)
    if not math.isfinite(x):
        return str(x)
    if column.startswith("ess"):
        return f"{x:.0f}"
    if column == "r_hat":
        return f"{x:.3f}"
    return f"{x:.4g}"


def _rows(diag: Mapping[str, Any], columns: Sequence[str]) -> tuple[list[list[str]], list[str]]:
    rows: list[list[str]] = []
    notes: list[str] = []
    for name, stats in diag["sites"].items():
        flat = {c: list(_elements(stats.get(c))) for c in columns}
        count = len(flat["mean"])
        for i, (index, _) in enumerate(itertools.islice(flat["mean"], MAX_ELEMENTS_PER_SITE)):
            label = name + ("[" + ",".join(map(str, index)) + "]" if index else "")
            rows.append([label, *(_cell(c, flat[c][i][1] if flat[c] else None) for c in columns)])
        if count > MAX_ELEMENTS_PER_SITE:
            notes.append(
                f"{name}: {count - MAX_ELEMENTS_PER_SITE} more element(s) not shown "
                "(op.summary() lists every one)"
            )
    return rows, notes


def _table(header: Sequence[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [list(header), *rows]) for i in range(len(header))]
    lines = []
    for r in [list(header), *rows]:
        first = r[0].ljust(widths[0])
        rest = "  ".join(cell.rjust(w) for cell, w in zip(r[1:], widths[1:], strict=True))
        lines.append(f"  {first}  {rest}")
    return lines


def _variational_health(diag: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    """A fitted guide's line: OK only when the ELBO converged and PSIS k-hat passed."""
    elbo = info.get("final_elbo")
    shown = f"final ELBO {elbo:.6g}" if isinstance(elbo, float) else "the ELBO"
    conv = diag.get("elbo_convergence") or {}
    imp = diag.get("importance") or {}
    khat = imp.get("khat")
    missing = []
    if not conv.get("checked"):
        missing.append("ELBO convergence (too few logged windows: lower log_every)")
    if khat is None:
        missing.append(f"Pareto k-hat ({imp.get('skipped', 'not computed')})")
    if missing:
        return (
            f"health: no problems found, but not checked: {'; '.join(missing)} ({shown}; "
            "compare with numpyro-mcmc to check the fit)"
        )
    return (
        f"health: OK — {shown} converged (the last tenth of the run changed it by "
        f"{conv.get('improvement', 0.0):.3g}), Pareto k-hat {khat:.2f} <= 0.7 over "
        f"{imp.get('num_draws')} guide draws (PSIS), and no guide sd collapsed"
    )


def _health(diag: Mapping[str, Any], info: Mapping[str, Any]) -> list[str]:
    problems = [str(w) for w in info.get("warnings") or []]
    if problems:
        head = f"health: {len(problems)} problem(s) — fix before trusting the posterior:"
        return [head, *(f"  - {p}" for p in problems)]
    if diag.get("kind") == "variational":
        return [_variational_health(diag, info)]
    chains = int(diag.get("num_chains", 1))
    rhat = "R-hat <= 1.01, " if chains > 1 else "one chain, so no R-hat; "
    checks = "".join(f", {c}" for c in diag.get("checks") or [])
    return [
        f"health: OK — no divergences, {rhat}bulk ESS >= 100 per chain and every draw "
        f"finite{checks}"
    ]


def posterior_report(info: Mapping[str, Any]) -> list[str]:
    """The report's lines for ``backend_info`` (empty when it carries no diagnostics)."""
    diag = info.get("diagnostics")
    if not isinstance(diag, Mapping) or not diag.get("sites"):
        return []
    variational = diag.get("kind") == "variational"
    columns = _VARIATIONAL_COLUMNS if variational else _SAMPLER_COLUMNS
    prob = float(diag.get("hdi_prob", 0.94))
    low, high = f"hdi_{(1 - prob) / 2:.0%}", f"hdi_{1 - (1 - prob) / 2:.0%}"
    header = ["site", *(low if c == "hdi_low" else high if c == "hdi_high" else c for c in columns)]
    rows, notes = _rows(diag, columns)
    source = "guide draws" if variational else "chain(s)"
    title = (
        f"posterior ({diag.get('num_chains', 1)} {source} × {diag.get('num_draws', '?')} draws"
        if not variational
        else f"posterior ({diag.get('num_draws', '?')} {source}"
    )
    lines = [f"{title}; {prob:.0%} highest-density interval):", *_table(header, rows)]
    lines += [f"  {n}" for n in notes]
    if not variational:
        lines.append(f"divergences: {diag.get('divergences', 0)}")
    return lines + _health(diag, info)
