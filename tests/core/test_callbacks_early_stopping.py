"""EarlyStopping on its own: min / max modes, patience (Lightning's and Keras' meaning:
stop at the `patience`-th check in a row without improvement), min_delta, the
val_-monitor vs training-monitor hooks, and a state_dict that survives JSON."""

from __future__ import annotations

import json

import pytest

from pipekit_train import EarlyStopping, TrainerCarryState, TrainingLoop

LOOP = TrainingLoop(dataset={"x": [0.0], "y": [0.0]}, loss="mse", log_every_n_steps=1)


def _feed(es: EarlyStopping, values: list[float]) -> int | None:
    """Feed one value per check (steps 1, 2, …); return the step where it asked to stop."""
    state = TrainerCarryState()
    for step, value in enumerate(values, start=1):
        state.step = step
        if es.monitor.startswith("val_"):
            es.on_eval_end(LOOP, state, {es.monitor: value})
        else:
            state.window = {es.monitor: [value]}
            state.window_steps = [step]
            es.on_step_end(LOOP, state)
        if state.should_stop:
            assert state.stop_reason is not None and es.monitor in state.stop_reason
            assert state.best[es.monitor] == es.state_dict()["best"]
            return step
    return None


@pytest.mark.parametrize(
    ("mode", "values", "patience", "stop"),
    [
        ("min", [5, 4, 3, 3, 3, 3], 3, 6),  # 3 equal values after the best: stop at the 3rd
        ("min", [5, 4, 3, 3, 3], 3, None),
        ("min", [5, 4, 6, 3, 7, 8], 2, 6),  # the improvement at step 4 resets the count
        ("min", [5, 6], 1, 2),
        ("min", [5, 6], 0, 2),  # patience 0: the first check without improvement
        ("min", [5, 4, 3, 2, 1], 0, None),  # improving every time never stops
        ("max", [0.1, 0.2, 0.3, 0.25, 0.3, 0.29], 3, 6),
        ("max", [0.1, 0.2, 0.3, 0.25, 0.31, 0.29], 3, None),
        ("max", [0.9, 0.1], 1, 2),
    ],
)
def test_stop_step_for_mode_and_patience(
    mode: str, values: list[float], patience: int, stop: int | None
) -> None:
    assert _feed(EarlyStopping(monitor="val_m", mode=mode, patience=patience), values) == stop
    # The same for a training metric checked at log steps.
    assert _feed(EarlyStopping(monitor="m", mode=mode, patience=patience), values) == stop


@pytest.mark.parametrize(
    ("mode", "values", "stop"),
    [
        ("min", [1.0, 0.95, 0.92, 0.91], 3),  # improvements of < 0.1 do not count
        ("min", [1.0, 0.85, 0.7, 0.55], None),
        ("max", [0.5, 0.55, 0.59], 3),
        ("max", [0.5, 0.65, 0.8], None),
    ],
)
def test_min_delta(mode: str, values: list[float], stop: int | None) -> None:
    es = EarlyStopping(monitor="val_m", mode=mode, patience=2, min_delta=0.1)
    assert _feed(es, values) == stop


def test_best_tracks_the_best_value_not_the_last() -> None:
    es = EarlyStopping(monitor="val_loss", patience=10)
    _feed(es, [3.0, 1.0, 2.0, 4.0])
    assert es.state_dict() == {"best": 1.0, "wait": 2}


def test_val_monitor_ignores_training_steps_and_vice_versa() -> None:
    es = EarlyStopping(monitor="val_loss", patience=0)
    state = TrainerCarryState(step=1, window={"val_loss": [1.0]}, window_steps=[1])
    es.on_step_end(LOOP, state)
    assert es.state_dict()["best"] is None
    train = EarlyStopping(monitor="loss", patience=0)
    train.on_eval_end(LOOP, state, {"val_loss": 1.0})
    assert train.state_dict()["best"] is None


def test_training_monitor_is_checked_at_log_steps_only() -> None:
    loop = TrainingLoop(dataset={"x": [0.0], "y": [0.0]}, loss="mse", log_every_n_steps=10)
    es = EarlyStopping(monitor="loss", patience=0)
    state = TrainerCarryState(step=15, window={"loss": [1.0]}, window_steps=[15])
    es.on_step_end(loop, state)
    assert es.state_dict()["best"] is None
    state.step = 20
    es.on_step_end(loop, state)
    assert es.state_dict()["best"] == 1.0


def test_missing_monitor_is_ignored() -> None:
    es = EarlyStopping(monitor="val_accuracy", patience=0)
    assert _feed(EarlyStopping(monitor="val_accuracy", patience=0), []) is None
    es.on_eval_end(LOOP, TrainerCarryState(step=1), {"val_loss": 1.0})
    assert es.state_dict() == {"best": None, "wait": 0}


def test_state_dict_roundtrips_through_json() -> None:
    es = EarlyStopping(monitor="val_loss", patience=3)
    _feed(es, [2.0, 1.0, 1.5, 1.7])
    saved = json.loads(json.dumps(es.state_dict()))
    assert saved == {"best": 1.0, "wait": 2}

    resumed = EarlyStopping(monitor="val_loss", patience=3)
    resumed.load_state_dict(saved)
    assert resumed.state_dict() == saved
    # Continuing: one more check without improvement reaches patience 3.
    state = TrainerCarryState(step=5)
    resumed.on_eval_end(LOOP, state, {"val_loss": 1.2})
    assert state.should_stop and resumed.stopped_at == 5


def test_fresh_state_dict_and_yaml_form() -> None:
    es = EarlyStopping(monitor="val_acc", patience=4, mode="max", min_delta=0.01)
    assert es.state_dict() == {"best": None, "wait": 0}
    assert es.to_config() == {
        "EarlyStopping": {"monitor": "val_acc", "patience": 4, "mode": "max", "min_delta": 0.01}
    }
    assert EarlyStopping(**es.to_config()["EarlyStopping"]) == es
