"""``accumulate_steps=4`` at ``batch_size=32`` trains like ``batch_size=128``.

Each optimiser update reads one record of ``4 × 32`` rows — the same rows, in the
same order, as the 128-row batch of the unaccumulated run (same seed) — and
``optax.MultiSteps`` averages the four micro-batch gradients into one update.
``max_steps`` counts optimiser updates, so both runs make 12 updates. The
averages are summed in another order than one 128-row mean, so parameters are
compared at a float tolerance: ``assert_allclose(rtol=1e-5, atol=1e-6)``
(and max |diff| < 1e-6 is asserted). Evaluation and the learning-rate schedule see
the same step count, so a cosine schedule decays over the 12 updates in both.
"""

from __future__ import annotations

import numpy as np
from _eqx_helpers import leaves, make_data, run_loop, tiny_loop


def _run(batch_size: int, accumulate_steps: int):
    return run_loop(
        tiny_loop(
            dataset=make_data(512),
            batch_size=batch_size,
            accumulate_steps=accumulate_steps,
            max_steps=12,
            log_every_n_steps=4,
            optimizer_config={
                "name": "adam",
                "lr": {"schedule": "cosine_decay", "init_value": 1e-2},
            },
        )
    )


def test_32_times_4_accumulated_equals_128_within_float_tolerance():
    big, big_info = _run(128, 1)
    acc, acc_info = _run(32, 4)
    assert acc_info["final_step"] == big_info["final_step"] == 12
    assert acc_info["features"]["accumulate_steps"] == 4
    diffs = []
    for a, b in zip(leaves(acc), leaves(big), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        diffs.append(float(np.max(np.abs(a - b))))
    assert max(diffs) < 1e-6
    # The logged loss is the mean over the micro-batches: the large batch's loss.
    np.testing.assert_allclose(
        acc_info["final_metrics"]["loss"], big_info["final_metrics"]["loss"], rtol=1e-5
    )
    # One schedule step per optimiser update, not per micro-batch.
    np.testing.assert_allclose(
        acc_info["final_metrics"]["lr"], big_info["final_metrics"]["lr"], rtol=1e-6
    )


def test_accumulation_changes_the_result_against_one_micro_batch():
    """Guard against a no-op: 4 × 32 accumulated is not 12 steps at 32."""
    small, _ = _run(32, 1)
    acc, _ = _run(32, 4)
    assert any(not np.allclose(a, b) for a, b in zip(leaves(acc), leaves(small), strict=True))
