"""``accumulate_steps=4`` at ``batch_size=32`` trains like ``batch_size=128`` on Lightning.

The field is Lightning's ``accumulate_grad_batches=4`` (each micro-batch loss scaled by
1/4, gradients summed: the mean). One update reads one batch of ``4 × 32`` rows of
pipekit's data order and micro-batch ``j`` is its rows ``j::4`` — the layout of the
Equinox and Keras backends — so each update sees exactly the 128 rows of the
unaccumulated run. ``max_steps`` counts optimiser updates (12 in both), callbacks see
updates, the logged loss is the mean over the micro-batches, and the cosine schedule
decays over the 12 updates. The mean of four 32-row means is summed in another order
than one 128-row mean, so the weights are compared at float tolerance.
"""

from __future__ import annotations

import numpy as np
from _lightning_helpers import data, loop

from pipekit_train import Callback


class Seen(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_step_end(self, loop, state) -> None:
        self.steps += state.window_steps


def _run(batch_size: int, accumulate_steps: int):
    seen = Seen()
    op, info = loop(
        dataset=data(512), batch_size=batch_size, accumulate_steps=accumulate_steps,
        max_steps=12, log_every_n_steps=4, callbacks=[seen],
        optimizer_config={"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1e-2}},
    ).run()  # fmt: skip
    return [p.detach().numpy().copy() for p in op.module.parameters()], info, seen.steps


def test_32_times_4_accumulated_equals_128_within_float_tolerance() -> None:
    big, big_info, big_steps = _run(128, 1)
    acc, acc_info, acc_steps = _run(32, 4)
    assert acc_info["final_step"] == big_info["final_step"] == 12
    assert acc_steps == big_steps == list(range(1, 13))
    diffs = []
    for a, b in zip(acc, big, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        diffs.append(float(np.max(np.abs(a - b))))
    assert max(diffs) < 1e-6
    np.testing.assert_allclose(
        acc_info["final_metrics"]["loss"], big_info["final_metrics"]["loss"], rtol=1e-5
    )
    np.testing.assert_allclose(
        acc_info["final_metrics"]["lr"], big_info["final_metrics"]["lr"], rtol=1e-6
    )


def test_accumulation_changes_the_result_against_one_micro_batch() -> None:
    """Guard against a no-op: 4 × 32 accumulated is not 12 updates at 32."""
    small, _, _ = _run(32, 1)
    acc, _, _ = _run(32, 4)
    assert any(not np.allclose(a, b) for a, b in zip(acc, small, strict=True))
