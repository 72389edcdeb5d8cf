"""numpyro-mcmc against posteriordb's reference posteriors (the CI subset).

4 chains x (1000 warmup + 1000 draws), float64 (``backend_options={"x64": True}``),
the sampler settings posteriordb/README.md measured. Per parameter:
z = |m - m_ref| / sqrt(mcse^2 + sd_ref^2/ess_ref) < 4 (ESS capped at the draws),
sd / sd_ref in [0.9, 1.1], rank-normalised split R-hat <= 1.01.
"""

from __future__ import annotations

import json
import os
import time
import warnings

import pytest
from _npy_helpers import criterion, pdb

CI_SUBSET = [
    "arK-arK",
    "kidiq-kidscore_interaction",
    "eight_schools-eight_schools_noncentered",
    "garch-garch11",
    "low_dim_gauss_mix-low_dim_gauss_mix",
    "sblrc-blr",
]

pytestmark = pytest.mark.skipif(
    not (pdb.POSTERIORDB / "arK-arK").exists(), reason="no posteriordb copy"
)


def run_posterior(name: str, seed: int = 0) -> tuple[object, dict, float]:
    loop = pdb.mcmc_loop(name, seed=seed)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    return op, info, time.perf_counter() - started


@pytest.mark.parametrize("name", CI_SUBSET)
def test_matches_reference(name: str) -> None:
    op, info, seconds = run_posterior(name)
    rows = criterion(op.samples_by_chain, name)
    print(json.dumps({"posterior": name, "seconds": round(seconds, 1), "rows": rows}))
    for r in rows:
        assert r["z"] < 4, r
        assert 0.9 <= r["sd_ratio"] <= 1.1, r
        assert r["r_hat"] <= 1.01, r


@pytest.mark.slow
@pytest.mark.skipif(
    not os.environ.get("PIPEKIT_POSTERIORDB_FULL"),
    reason="outside the CI subset (about 20 s); set PIPEKIT_POSTERIORDB_FULL=1",
)
def test_gp_pois_regr_matches_reference() -> None:
    """The hard geometry: float64 required, target_accept 0.99 (outside the CI subset)."""
    test_matches_reference("gp_pois_regr-gp_pois_regr")
