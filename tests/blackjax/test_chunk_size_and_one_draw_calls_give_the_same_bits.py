"""The draws do not depend on how the driver cuts the run: one draw per jitted call
(``steps_per_call=1``) and ``lax.scan`` chunks of 7 and 50 give the same bits, for one
chain and for four vmapped chains — the adapted step size and mass matrix are traced
carry in every path, so every path compiles the same step. The particle samplers too: SMC
(tempering steps, the no-ops after λ = 1 and the resampling step) and SVGD, one step per
call against chunks of 7."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _bjx_helpers import gauss_task, loop_for


def _draws(num_chains: int, k: int, sampler: str = "nuts") -> dict[str, np.ndarray]:
    task = gauss_task(num_warmup=30, num_samples=40, num_chains=num_chains)
    loop = loop_for(task, sampler, options={"steps_per_call": k}, log_every_n_steps=10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    assert info["draws_collected"] == 40
    return op.samples_by_chain


@pytest.mark.parametrize("num_chains", [1, 4])
def test_nuts_chunks_of_1_7_and_50_are_bit_identical(num_chains: int) -> None:
    ref = _draws(num_chains, 1)
    assert ref["position"].shape == (num_chains, 40, 3)
    assert np.unique(ref["position"][:, :, 0]).size > 20 * num_chains  # the chains move
    for k in (7, 50):
        got = _draws(num_chains, k)
        assert got["position"].tobytes() == ref["position"].tobytes(), k


def test_hmc_chunks_are_bit_identical() -> None:
    ref = _draws(2, 1, "hmc")
    assert _draws(2, 7, "hmc")["position"].tobytes() == ref["position"].tobytes()


@pytest.mark.parametrize(
    ("sampler", "options"),
    [
        ("smc", {"max_tempering_steps": 8, "num_particles": 32}),  # tempering + no-ops + resample
        ("svgd", {"num_updates": 15}),  # keyless particle updates
    ],
)
def test_particle_samplers_one_step_calls_and_chunks_of_7_are_bit_identical(
    sampler: str, options: dict
) -> None:
    def draws(k: int) -> np.ndarray:
        task = gauss_task(num_samples=20, num_chains=2)
        loop = loop_for(task, sampler, options={**options, "steps_per_call": k})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            op, info = loop.run()
        assert info["draws_collected"] == 20
        return op.samples_by_chain["position"]

    ref = draws(1)
    assert ref.shape == (2, 20, 3) and np.unique(ref[:, :, 0]).size > 10
    assert draws(7).tobytes() == ref.tobytes()
