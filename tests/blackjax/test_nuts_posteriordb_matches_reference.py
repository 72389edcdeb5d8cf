"""blackjax NUTS against posteriordb's reference posteriors (the CI subset), with the very
criterion of tests/numpyro/test_mcmc_posteriordb_matches_reference.py.

4 chains x (1000 warmup + 1000 draws), float64, the settings posteriordb/README.md
measured (``examples/posteriordb_models.py:blackjax_loop``). Per parameter:
z = |m - m_ref| / sqrt(mcse^2 + sd_ref^2/ess_ref) < 4 (ESS capped at the draws),
sd / sd_ref in [0.9, 1.1], rank-normalised split R-hat <= 1.01.
"""

from __future__ import annotations

import json
import time
import warnings

import pytest
from _bjx_helpers import criterion, pdb

CI_SUBSET = [
    "eight_schools-eight_schools_noncentered",
    "kidiq-kidscore_interaction",
    "arK-arK",
    "sblrc-blr",
]

pytestmark = pytest.mark.skipif(
    not (pdb.POSTERIORDB / "arK-arK").exists(), reason="no posteriordb copy"
)


@pytest.mark.parametrize("name", CI_SUBSET)
def test_nuts_matches_reference(name: str) -> None:
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = pdb.blackjax_loop(name).run()
    rows = criterion(op.samples_by_chain, name)
    print(
        json.dumps(
            {"posterior": name, "seconds": round(time.perf_counter() - started, 1), "rows": rows}
        )
    )
    assert info["sampler"] == "nuts" and info["x64"]
    for r in rows:
        assert r["z"] < 4, r
        assert 0.9 <= r["sd_ratio"] <= 1.1, r
        assert r["r_hat"] <= 1.01, r
