"""Pathfinder runs through the driver with its own step meaning — one approximation step, then
one i.i.d. draw per chain and step — and on a Gaussian target (where its approximation is
exact up to L-BFGS) recovers the mean and the scales; the chunking does not change the bits.
As NUTS's warm start (``warm_start="pathfinder"``) it moves far-off chains to the typical set."""

from __future__ import annotations

import warnings

import numpy as np
from _bjx_helpers import SCALES, gauss_task, loop_for

from pipekit_train import Callback


def _run(k: int) -> tuple[np.ndarray, dict]:
    loop = loop_for(
        gauss_task(num_samples=300, num_chains=2),
        "pathfinder",
        options={"steps_per_call": k},
        log_every_n_steps=50,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    return op.samples_by_chain["position"], info


def test_pathfinder_recovers_the_gaussian_and_chunks_do_not_matter() -> None:
    draws, info = _run(50)
    assert draws.shape == (2, 300, 3)
    assert info["phases"] == {"warmup": 1, "sampling": 300}
    assert "Pathfinder" in info["step_meaning"]
    flat = draws.reshape(-1, 3)
    np.testing.assert_allclose(flat.mean(0), [1.0, -1.0, 0.5], atol=0.25)
    np.testing.assert_allclose(flat.std(0), SCALES, rtol=0.2)
    assert {"elbo", "log_q"} <= set(info["final_metrics"])
    assert _run(7)[0].tobytes() == draws.tobytes()


class _FirstWindow(Callback):
    def __init__(self) -> None:
        self.phases: dict[str, dict] = {}

    def on_step_end(self, loop, state) -> None:
        self.phases.setdefault(state.phase, {k: np.asarray(v) for k, v in state.window.items()})


def test_pathfinder_warm_start_moves_nuts_chains_to_the_typical_set() -> None:
    rec = _FirstWindow()
    far = [30.0, -30.0, 10.0]  # log density about -700 here
    loop = loop_for(
        gauss_task(init_position=far, num_warmup=30, num_samples=30, num_chains=2),
        "nuts",
        options={"steps_per_call": 10, "warm_start": "pathfinder"},
        log_every_n_steps=1,
        callbacks=[rec],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    assert info["phases"] == {"pathfinder": 1, "warmup": 30, "sampling": 30}
    assert np.all(rec.phases["pathfinder"]["logdensity"] > -10)  # both chains restarted near it
    np.testing.assert_allclose(op.samples["position"].mean(0), [1.0, -1.0, 0.5], atol=1.0)
