"""`backend_options.steps_per_execution=K` trains to the same bits as K = 1.

Keras runs K steps per call to its train function (a Python loop over one jitted step in
3.15); the data order and the step count do not depend on K, so neither do the weights.
Callbacks see one window entry per K steps.
"""

from __future__ import annotations

import numpy as np
from _keras_helpers import digits, mlp, variables

from pipekit_train import Callback, TrainingLoop


class Steps(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_step_end(self, loop, state) -> None:
        self.steps += state.window_steps


def _train(k: int) -> tuple[list[np.ndarray], list[int]]:
    model = mlp(hidden=16, dropout=0.2)
    seen = Steps()
    TrainingLoop(
        model_op=model, dataset=digits(300), loss="cross_entropy", batch_size=32, max_steps=20,
        log_every_n_steps=10, callbacks=[seen], backend="keras",
        backend_options={"steps_per_execution": k},
    ).run()  # fmt: skip
    return variables(model), seen.steps


def test_k5_equals_k1_bit_for_bit() -> None:
    one, steps_one = _train(1)
    five, steps_five = _train(5)
    assert len(one) == len(five)
    for a, b in zip(one, five, strict=True):
        assert a.tobytes() == b.tobytes()
    assert steps_one == list(range(1, 21))
    assert steps_five == [5, 10, 15, 20]
