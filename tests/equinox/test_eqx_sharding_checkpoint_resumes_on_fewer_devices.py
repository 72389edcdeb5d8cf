"""A checkpoint written by an 8-device run resumes on a 2-device mesh and finishes the job.

Leg 1 (8 devices, in the shared 8-device subprocess): data parallel, a checkpoint
every 10 steps, stopped at step 20 like a pre-empted job. Leg 2 (a new process
with 2 devices, mesh ("data": 2)) runs the same loop on the same
``checkpoint_dir``: Orbax restores the state onto the 2-device shardings, Grain's
iterator continues the same global batches, and it trains to step 40. The result
equals an uninterrupted 8-device run within ``rtol=1e-5, atol=1e-6`` (the meshes
reduce in different orders; measured max |diff| 1.2e-7).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _sharding_helpers import (
    MAX_STEPS,
    STOP_AT,
    assert_params_close,
    eight_device_results,
    params,
    run_worker,
)


@pytest.fixture(scope="module")
def resumed():
    eight = eight_device_results()
    assert eight["ckpt_leg1"]["final_step"] == STOP_AT
    assert eight["ckpt_leg1"]["resumed_from_step"] is None
    ckpt = Path(eight["out_dir"]).parent / "ckpt"
    assert (ckpt / str(STOP_AT)).is_dir()
    leg2 = {
        "name": "leg2",
        "mesh": [["data", 2]],
        "max_steps": MAX_STEPS,
        "batch_size": 32,
        "n": 128,
        "checkpoint_dir": str(ckpt),
        "checkpoint_every": 10,
    }
    return run_worker(2, [leg2], Path(eight["out_dir"]).parent / "out2")


def test_two_device_run_resumes_from_the_eight_device_checkpoint(resumed):
    leg2 = resumed["leg2"]
    assert leg2["resumed_from_step"] == STOP_AT
    assert leg2["final_step"] == MAX_STEPS
    assert leg2["sharding"]["mesh_shape"] == {"data": 2}
    for leaf in leg2["leaves"]:
        assert leaf["num_devices"] == 2 and leaf["replicated"]


def test_resumed_run_matches_an_uninterrupted_eight_device_run(resumed):
    diff = assert_params_close(params(resumed, "leg2"), params(eight_device_results(), "dp_k1"))
    assert diff < 1e-6
