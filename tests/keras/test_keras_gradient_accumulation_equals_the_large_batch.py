"""``accumulate_steps=4`` at ``batch_size=32`` trains like ``batch_size=128`` on Keras.

The backend maps the field onto the optimiser's ``gradient_accumulation_steps=4``
(Keras sums the four micro-batch gradients and divides by 4: the mean) and feeds
Keras 4 micro-batches per optimiser update, micro-batch ``j`` being rows ``j::4`` of
the 128 rows the unaccumulated run reads at that step. ``max_steps`` counts updates
(12 in both runs), callbacks and the log cadence see updates, the logged loss is the
mean over the micro-batches, and the cosine schedule decays over the 12 updates, not
48 micro-batches. The mean of four 32-row means is summed in another order than one
128-row mean, so the weights are compared at float tolerance.
"""

from __future__ import annotations

import numpy as np
from _keras_helpers import digits, mlp

from pipekit_train import Callback, TrainingLoop


class Seen(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.events: list[int] = []

    def on_step_end(self, loop, state) -> None:
        self.steps += state.window_steps
        self.events.append(state.step)


def _run(batch_size: int, accumulate_steps: int):
    model = mlp(hidden=16, seed=0)
    seen = Seen()
    _, info = TrainingLoop(
        model_op=model, dataset=digits(512), loss="cross_entropy", batch_size=batch_size,
        accumulate_steps=accumulate_steps, max_steps=12, log_every_n_steps=4, callbacks=[seen],
        optimizer_config={"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1e-2}},
        backend="keras",
    ).run()  # fmt: skip
    return model, info, seen


def test_32_times_4_accumulated_equals_128_within_float_tolerance() -> None:
    big, big_info, big_seen = _run(128, 1)
    acc, acc_info, acc_seen = _run(32, 4)
    assert acc_info["final_step"] == big_info["final_step"] == 12
    assert acc_info["features"]["accumulate_steps"] == 4
    assert acc_seen.steps == big_seen.steps == list(range(1, 13))  # updates, not micro-batches
    assert acc_seen.events == big_seen.events == [4, 8, 12]
    # Keras' own counter: 48 micro-batches made 12 updates.
    assert int(np.asarray(acc.optimizer.iterations)) == 12
    diffs = []
    for a, b in zip(acc.trainable_variables, big.trainable_variables, strict=True):
        a, b = np.asarray(a.value), np.asarray(b.value)
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
    assert any(
        not np.allclose(np.asarray(a.value), np.asarray(b.value))
        for a, b in zip(acc.trainable_variables, small.trainable_variables, strict=True)
    )
