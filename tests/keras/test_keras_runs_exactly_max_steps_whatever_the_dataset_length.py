"""`fit` runs exactly max_steps steps, over several epochs or less than one of the data."""

from __future__ import annotations

import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import Callback, TrainingLoop


class StepLog(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.losses: list[float] = []

    def on_step_end(self, loop, state) -> None:
        self.steps += state.window_steps
        self.losses += list(state.window["loss"])


@pytest.mark.parametrize(("rows", "max_steps"), [(200, 37), (1000, 7)])
def test_optimizer_iterations_equal_max_steps(rows: int, max_steps: int) -> None:
    model = mlp()
    log = StepLog()
    loop = TrainingLoop(
        model_op=model,
        dataset=digits(rows),
        loss="cross_entropy",
        batch_size=32,
        max_steps=max_steps,
        log_every_n_steps=5,
        callbacks=[log],
        backend="keras",
    )
    op, info = loop.run()
    assert int(np.asarray(model.optimizer.iterations.value)) == max_steps
    assert info["final_step"] == max_steps
    # every step's own loss reached the callbacks, once each, in order
    assert log.steps == list(range(1, max_steps + 1))
    assert len(set(log.losses)) == max_steps
    assert op.model is model
