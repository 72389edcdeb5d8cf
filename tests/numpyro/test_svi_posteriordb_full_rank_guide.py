"""numpyro-svi with a full-rank guide (AutoMultivariateNormal) against posteriordb:
means within 0.15 sd_ref on arK and within 0.3 sd_ref on sblrc (minibatches of 20)."""

from __future__ import annotations

import json
import time
import warnings

import pytest
from _npy_helpers import param_values, pdb

pytestmark = pytest.mark.skipif(
    not (pdb.POSTERIORDB / "arK-arK").exists(), reason="no posteriordb copy"
)

CASES = {
    # posterior: (steps, batch_size or None for full batch, lr, tolerance in sd_ref)
    "arK-arK": (20000, None, 0.01, 0.15),
    "sblrc-blr": (24000, 20, 0.01, 0.3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_means_close_to_reference(name: str) -> None:
    steps, batch, lr, tol = CASES[name]
    loop = pdb.svi_loop(name, steps=steps, lr=lr, batch_size=batch)
    started = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    seconds = time.perf_counter() - started
    ref = pdb.load_reference(name)["parameters"]
    rows = {
        p: float((param_values(op.samples_by_chain, p).mean() - r["mean"]) / r["sd"])
        for p, r in ref.items()
    }
    print(
        json.dumps(
            {
                "posterior": name,
                "seconds": round(seconds, 1),
                "mean_in_sd": rows,
                "final_elbo": info["final_elbo"],
            }
        )
    )
    assert info["final_step"] == steps and info["final_elbo"] is not None
    for p, d in rows.items():
        assert abs(d) < tol, (p, d)
