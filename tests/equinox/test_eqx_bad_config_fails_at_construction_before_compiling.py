"""Mistakes in the loop's own fields are ConfigErrors raised by ``TrainingLoop(...)``.

They are caught at construction — before a backend is even loaded — so nothing is
compiled; the watch proves it. Each message names the field and says what is valid.
"""

from __future__ import annotations

import pytest
from _eqx_helpers import make_data, make_model, tiny_loop, watch_compilation

from pipekit_train import Checkpoint, ConfigError, EarlyStopping, TrainingLoop

CASES = [
    (
        "unknown-optimiser",
        {"optimizer_config": {"name": "adamm", "lr": 1e-3}},
        "optimizer_config.name",
        ["'adamm'", "did you mean 'adam'", "adamw"],
    ),
    (
        "unknown-schedule",
        {"optimizer_config": {"name": "adam", "lr": {"schedule": "cosine", "init_value": 0.1}}},
        "optimizer_config.lr.schedule",
        ["'cosine'", "did you mean 'cosine_decay'", "warmup_cosine_decay"],
    ),
    (
        "schedule-missing-field",
        {
            "optimizer_config": {
                "name": "adam",
                "lr": {"schedule": "exponential_decay", "init_value": 0.1, "decay_rate": 0.5},
            }
        },
        "optimizer_config.lr.transition_steps",
        ["transition_steps", "missing"],
    ),
    ("unknown-loss", {"loss": "crossentropy"}, "loss", ["'crossentropy'", "cross_entropy"]),
    ("loss-not-callable", {"loss": 3}, "loss", ["callable"]),
    ("zero-max-steps", {"max_steps": 0}, "max_steps", ["max_steps", "positive integer", "0"]),
    ("negative-max-steps", {"max_steps": -5}, "max_steps", ["positive integer", "-5"]),
    ("float-max-steps", {"max_steps": 10.0}, "max_steps", ["positive integer"]),
    ("zero-log-cadence", {"log_every_n_steps": 0}, "log_every_n_steps", ["positive integer"]),
    ("negative-log-cadence", {"log_every_n_steps": -1}, "log_every_n_steps", ["positive integer"]),
    (
        "zero-eval-cadence",
        {"eval_every_n_steps": 0, "val_dataset": make_data(16)},
        "eval_every_n_steps",
        ["positive integer"],
    ),
    (
        "eval-cadence-without-val-dataset",
        {"eval_every_n_steps": 5},
        "eval_every_n_steps",
        ["val_dataset"],
    ),
    ("zero-batch-size", {"batch_size": 0}, "batch_size", ["positive integer"]),
    ("no-loss-no-task", {"loss": None}, "loss", ["loss=", "task="]),
    (
        "checkpoint-callback-without-dir",
        {"callbacks": [Checkpoint(every_n_steps=5)]},
        "checkpoint_dir",
        ["checkpoint_dir"],
    ),
    ("callback-not-a-callback", {"callbacks": [print]}, "callbacks", ["callbacks[0]"]),
]


@pytest.mark.parametrize(
    "overrides, field, fragments", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_construction_raises_config_error_naming_the_field(
    monkeypatch, overrides, field, fragments
):
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(ConfigError) as info:
            tiny_loop(**overrides)
    assert info.value.field == field
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)
    assert not watch.anything


@pytest.mark.parametrize("every", [0, -3, 2.5, True])
def test_checkpoint_every_n_steps_must_be_positive(every):
    with pytest.raises(ConfigError) as info:
        Checkpoint(every_n_steps=every)
    assert info.value.field == "Checkpoint.every_n_steps"
    assert "positive integer" in str(info.value)


def test_checkpoint_keep_last_must_be_positive():
    with pytest.raises(ConfigError) as info:
        Checkpoint(every_n_steps=5, keep_last=0)
    assert info.value.field == "Checkpoint.keep_last"


def test_early_stopping_mode_is_checked():
    with pytest.raises(ConfigError) as info:
        EarlyStopping(monitor="val_loss", mode="lowest")
    assert info.value.field == "EarlyStopping.mode"
    assert "'min' or 'max'" in str(info.value)


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError):
        TrainingLoop(model_op=make_model(), dataset=make_data(), loss="mse", max_steps=0)
