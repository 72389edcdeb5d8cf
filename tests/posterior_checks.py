"""Shared test support of the Bayesian backends (numpyro-mcmc, numpyro-svi, blackjax): the
posteriordb models and the reference criterion, so every backend is judged the same way."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO / "examples") not in sys.path:
    sys.path.insert(0, str(REPO / "examples"))

import posteriordb_models as pdb  # noqa: E402

from pipekit_train.adapters.bayes import diagnostics  # noqa: E402


def param_values(samples_by_chain: dict[str, np.ndarray], name: str) -> np.ndarray:
    """Draws ``(chains, draws)`` of a posteriordb parameter name such as ``beta[2]``."""
    site, _, idx = name.partition("[")
    v = np.asarray(samples_by_chain[site])
    return v if not idx else v[..., int(idx[:-1]) - 1]


def criterion(samples_by_chain: dict[str, np.ndarray], posterior: str) -> list[dict[str, Any]]:
    """Per parameter: z = |m - m_ref| / sqrt(mcse^2 + sd_ref^2 / ess_ref), sd / sd_ref, R-hat.

    ``mcse`` is ArviZ's MCSE of the mean with the ESS capped at the number of draws
    (as posteriordb/README.md prescribes); ``ess_ref`` is posteriordb's bulk ESS,
    capped at its number of draws.
    """
    ref = pdb.load_reference(posterior)["parameters"]
    rows = []
    for name, r in ref.items():
        draws = param_values(samples_by_chain, name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            d = diagnostics({"p": draws})["sites"]["p"]
        n = draws.size
        sd = float(np.std(draws.ravel(), ddof=1))
        mcse = max(float(d["mcse_mean"]), sd / np.sqrt(n))
        ess_ref = min(float(r["posteriordb_ess_bulk"]), float(r["n_draws"]))
        z = abs(float(d["mean"]) - r["mean"]) / np.sqrt(mcse**2 + r["sd"] ** 2 / ess_ref)
        rows.append(
            {
                "name": name,
                "z": float(z),
                "sd_ratio": sd / r["sd"],
                "r_hat": float(d["r_hat"]),
                "mean_in_sd": (float(d["mean"]) - r["mean"]) / r["sd"],
            }
        )
    return rows


#: The posteriors both screens' compile-option tests run: eight schools, the ARMA whose flat
#: tail the screen exists for, and GARCH.
SCREEN_POSTERIORS = (
    "eight_schools-eight_schools_noncentered",
    "arma-arma11",
    "garch-garch11",
)


def assert_screen_keeps_its_bits(
    kept: Any, module: Any, monkeypatch: Any, seeds: tuple[int, ...] = (0, 7)
) -> None:
    """``kept(seed)``, a screen's answer as a list of arrays, is the same bits compiled with
    ``module.SCREEN_COMPILER_OPTIONS`` as with XLA's defaults (the name set to None)."""
    for seed in seeds:
        ours = kept(seed)
        with monkeypatch.context() as m:
            m.setattr(module, "SCREEN_COMPILER_OPTIONS", None)
            default = kept(seed)
        assert len(ours) == len(default), seed
        for a, b in zip(ours, default, strict=True):
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), seed
