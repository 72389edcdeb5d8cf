"""The user's own ``keras.callbacks.EarlyStopping`` from the "Training & evaluation with
the built-in methods" guide (``monitor="val_loss", min_delta=1e-2, patience=2``), given in
``backend_options["callbacks"]``, sees the data's epochs with ``val_loss`` and stops the
run at the epoch where plain ``fit`` on the same batches stops: the same epochs, the same
``val_loss`` at each, the same ``stopped_epoch``; the loop ends at that epoch's last step
and says why. (Source: https://keras.io/guides/training_with_built_in_methods/)"""

from __future__ import annotations

import keras
from _keras_guide_callbacks import STEPS_PER_EPOCH, EpochRecorder, guide_model, run_fit, run_loop


def _early_stopping() -> keras.callbacks.EarlyStopping:
    return keras.callbacks.EarlyStopping(
        # Stop training when `val_loss` is no longer improving
        monitor="val_loss",
        # "no longer improving" being defined as "no better than 1e-2 less"
        min_delta=1e-2,
        # "no longer improving" being further defined as "for at least 2 epochs"
        patience=2,
    )


def test_users_early_stopping_stops_at_the_epoch_fit_stops() -> None:
    theirs, theirs_rows = _early_stopping(), EpochRecorder()
    run_fit(guide_model(1e-2), [theirs, theirs_rows])
    assert 0 < theirs.stopped_epoch < 29  # it acted

    ours, ours_rows = _early_stopping(), EpochRecorder()
    _, info = run_loop(guide_model(1e-2), [ours, ours_rows])
    assert ours.stopped_epoch == theirs.stopped_epoch
    assert [r[0] for r in ours_rows.rows] == [r[0] for r in theirs_rows.rows]
    for (epoch, a, _), (_, b, _) in zip(ours_rows.rows, theirs_rows.rows, strict=True):
        assert abs(a - b) < 1e-4, (epoch, a, b)
    assert info["final_step"] == (theirs.stopped_epoch + 1) * STEPS_PER_EPOCH
    assert "epoch" in (info["stop_reason"] or ""), info["stop_reason"]
