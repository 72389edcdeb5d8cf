"""The user's own ``keras.callbacks.ReduceLROnPlateau`` (its API docs' ``monitor="val_loss",
factor=0.2``, here ``patience=1``), given in ``backend_options["callbacks"]`` with the
"Training & evaluation with the built-in methods" guide's model, lowers the rate at the
same epochs as plain ``fit`` on the same batches: each epoch's ``val_loss`` and rate equal
``fit``'s, and the steps after a reduction train at the lower rate (the logged ``lr``
follows it). (Sources: https://keras.io/api/callbacks/reduce_lr_on_plateau/,
https://keras.io/guides/training_with_built_in_methods/)"""

from __future__ import annotations

import keras
from _keras_guide_callbacks import EPOCHS, EpochRecorder, guide_model, run_fit, run_loop

from pipekit_train import Callback


def _reduce_lr() -> keras.callbacks.ReduceLROnPlateau:
    return keras.callbacks.ReduceLROnPlateau(
        monitor="val_loss", factor=0.2, patience=1, min_lr=1e-5
    )


class Rates(Callback):
    def __init__(self) -> None:
        self.lr: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        self.lr.update(zip(state.window_steps, state.window["lr"], strict=True))


def test_users_reduce_lr_on_plateau_lowers_the_rate_at_fits_epochs() -> None:
    theirs = EpochRecorder()
    run_fit(guide_model(1e-2), [_reduce_lr(), theirs])
    rates = [r[2] for r in theirs.rows]
    assert len(theirs.rows) == EPOCHS and min(rates) < rates[0]  # it acted

    ours, logged = EpochRecorder(), Rates()
    run_loop(guide_model(1e-2), [_reduce_lr(), ours], callbacks=[logged])
    assert [r[0] for r in ours.rows] == [r[0] for r in theirs.rows]
    for (epoch, a, rate_a), (_, b, rate_b) in zip(ours.rows, theirs.rows, strict=True):
        assert abs(a - b) < 1e-4, (epoch, a, b)
        assert abs(rate_a - rate_b) < 1e-9, (epoch, rate_a, rate_b)
    assert min(logged.lr.values()) < max(logged.lr.values())
