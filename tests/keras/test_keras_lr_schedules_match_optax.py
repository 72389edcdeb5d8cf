"""Schedule dicts become keras.optimizers.schedules with optax's values at every step.

The live rate during training (the ``lr`` metric of every step, as on the JAX
backends; Keras purges ``optimizer.learning_rate`` during ``fit``) follows the
schedule too, and equals the rate Keras' optimiser holds after ``fit``.
"""

from __future__ import annotations

import keras
import numpy as np
import optax
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import Callback, TrainingLoop
from pipekit_train.adapters.keras._optim import resolve_keras_schedule
from pipekit_train.jax.optim import resolve_schedule

SCHEDULES = [
    {"schedule": "cosine_decay", "init_value": 1e-2, "alpha": 0.1},
    {"schedule": "warmup_cosine_decay", "init_value": 0.0, "peak_value": 1e-2, "warmup_steps": 10,
     "end_value": 1e-4},
    {"schedule": "exponential_decay", "init_value": 1e-2, "transition_steps": 7, "decay_rate": 0.5},
    {"schedule": "exponential_decay", "init_value": 1e-2, "transition_steps": 7, "decay_rate": 0.5,
     "staircase": True},
    {"schedule": "linear", "init_value": 1e-2, "end_value": 1e-3},
    {"schedule": "piecewise_constant", "init_value": 1e-2,
     "boundaries_and_scales": {10: 0.5, 30: 0.1}},
]  # fmt: skip

MAX_STEPS = 50


@pytest.mark.parametrize("lr", SCHEDULES, ids=lambda s: s["schedule"])
def test_keras_schedule_values_equal_optax(lr: dict) -> None:
    ours = resolve_keras_schedule(keras, lr, MAX_STEPS)
    ref = resolve_schedule(lr, max_steps=MAX_STEPS)
    for step in range(MAX_STEPS + 5):
        want = float(ref(step)) if callable(ref) else float(ref)
        got = float(np.asarray(ours(step)))
        assert got == pytest.approx(want, rel=1e-5, abs=1e-9), (step, got, want)


def test_constant_is_a_float() -> None:
    assert resolve_keras_schedule(keras, {"schedule": "constant", "value": 0.1}, 10) == 0.1


class LiveRate(Callback):
    def __init__(self) -> None:
        self.rates: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        self.rates.update(zip(state.window_steps, state.window["lr"], strict=True))


def test_live_learning_rate_follows_the_schedule_during_fit() -> None:
    lr = {"schedule": "warmup_cosine_decay", "init_value": 0.0, "peak_value": 1e-2,
          "warmup_steps": 5}  # fmt: skip
    model = mlp(hidden=8)
    live = LiveRate()
    TrainingLoop(
        model_op=model, dataset=digits(128), loss="cross_entropy", batch_size=32, max_steps=20,
        log_every_n_steps=4, optimizer_config={"name": "adamw", "lr": lr}, callbacks=[live],
        backend="keras",
    ).run()  # fmt: skip
    ref = optax.warmup_cosine_decay_schedule(0.0, 1e-2, 5, 20)
    assert sorted(live.rates) == list(range(1, 21))
    for step, rate in live.rates.items():  # step s's update used the rate at count s - 1
        assert rate == pytest.approx(float(ref(step - 1)), rel=1e-5, abs=1e-9), step
    after = float(np.asarray(model.optimizer.learning_rate))  # iterations == 20 now
    assert after == pytest.approx(float(ref(20)), rel=1e-5, abs=1e-9)
