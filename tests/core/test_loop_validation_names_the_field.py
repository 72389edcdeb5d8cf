"""`TrainingLoop(...)` validates types, ranges and the optimiser config at construction and
raises ConfigError (a ValueError) whose `.field` and message name the offending field."""

from __future__ import annotations

from typing import Any

import pytest

from pipekit_train import (
    Checkpoint,
    ConfigError,
    EarlyStopping,
    PipekitError,
    TrainingLoop,
)

DATA = {"x": [0.0, 1.0], "y": [0.0, 1.0]}
BASE: dict[str, Any] = {"dataset": DATA, "loss": "mse"}

# (case id, overrides of BASE, expected ConfigError.field, text the message must contain)
CASES: list[tuple[str, dict[str, Any], str, str]] = [
    ("batch_size=0", {"batch_size": 0}, "batch_size", "batch_size"),
    ("batch_size=-1", {"batch_size": -1}, "batch_size", "batch_size"),
    ("batch_size=1.5", {"batch_size": 1.5}, "batch_size", "batch_size"),
    ("batch_size=True", {"batch_size": True}, "batch_size", "batch_size"),
    ("batch_size='32'", {"batch_size": "32"}, "batch_size", "batch_size"),
    ("max_steps=0", {"max_steps": 0}, "max_steps", "max_steps"),
    ("max_steps=None", {"max_steps": None}, "max_steps", "max_steps"),
    ("log_every_n_steps=0", {"log_every_n_steps": 0}, "log_every_n_steps", "log_every_n_steps"),
    (
        "eval_every_n_steps=0",
        {"eval_every_n_steps": 0, "val_dataset": DATA},
        "eval_every_n_steps",
        "eval_every_n_steps",
    ),
    (
        "eval_every_n_steps-without-val_dataset",
        {"eval_every_n_steps": 10},
        "eval_every_n_steps",
        "val_dataset",
    ),
    ("seed='a'", {"seed": "a"}, "seed", "seed"),
    ("seed=1.0", {"seed": 1.0}, "seed", "seed"),
    ("seed=2**63", {"seed": 2**63}, "seed", "64 bits"),
    ("seed=-2**63-1", {"seed": -(2**63) - 1}, "seed", "64 bits"),
    (
        "optimizer_config-not-a-dict",
        {"optimizer_config": "adam"},
        "optimizer_config",
        "optimizer_config",
    ),
    (
        "optimizer_config-unknown-name",
        {"optimizer_config": {"name": "adamm", "lr": 1e-3}},
        "optimizer_config.name",
        "did you mean 'adam'",
    ),
    (
        "optimizer_config-missing-name",
        {"optimizer_config": {"lr": 1e-3}},
        "optimizer_config.name",
        "optimizer_config.name",
    ),
    (
        "optimizer_config-negative-lr",
        {"optimizer_config": {"name": "sgd", "lr": -0.1}},
        "optimizer_config.lr",
        "optimizer_config.lr",
    ),
    (
        "optimizer_config-unknown-schedule",
        {"optimizer_config": {"name": "adam", "lr": {"schedule": "cosine"}}},
        "optimizer_config.lr.schedule",
        "cosine_decay",
    ),
    (
        "optimizer_config-schedule-missing-field",
        {
            "optimizer_config": {
                "name": "adam",
                "lr": {"schedule": "exponential_decay", "init_value": 1e-3},
            }
        },
        "optimizer_config.lr.transition_steps",
        "transition_steps",
    ),
    (
        "optimizer_config-schedule-unknown-field",
        {
            "optimizer_config": {
                "name": "adam",
                "lr": {"schedule": "constant", "value": 1e-3, "vlaue": 1},
            }
        },
        "optimizer_config.lr.vlaue",
        "vlaue",
    ),
    (
        "optimizer_config-warmup-longer-than-run",
        {
            "max_steps": 50,
            "optimizer_config": {
                "name": "adam",
                "lr": {
                    "schedule": "warmup_cosine_decay",
                    "init_value": 0.0,
                    "peak_value": 1e-3,
                    "warmup_steps": 100,
                },
            },
        },
        "optimizer_config.lr.warmup_steps",
        "max_steps",
    ),
    ("loss-unknown-name", {"loss": "cross_entropi"}, "loss", "did you mean 'cross_entropy'"),
    ("loss-not-str-or-callable", {"loss": 3}, "loss", "loss"),
    ("neither-loss-nor-task", {"loss": None}, "loss", "task"),
    ("dataset-None", {"dataset": None}, "dataset", "dataset"),
    ("callbacks-not-a-list", {"callbacks": EarlyStopping()}, "callbacks", "callbacks"),
    ("callbacks-a-string", {"callbacks": "EarlyStopping"}, "callbacks", "callbacks"),
    (
        "callbacks-non-callback",
        {"callbacks": [EarlyStopping(), object()]},
        "callbacks",
        "callbacks[1]",
    ),
    (
        "callbacks-two-checkpoints",
        {"callbacks": [Checkpoint(), Checkpoint(every_n_steps=10)], "checkpoint_dir": "/tmp/ck"},
        "callbacks",
        "Checkpoint",
    ),
    ("checkpoint-without-dir", {"callbacks": [Checkpoint()]}, "checkpoint_dir", "checkpoint_dir"),
    ("checkpoint_dir-not-a-path", {"checkpoint_dir": 123}, "checkpoint_dir", "checkpoint_dir"),
    (
        "metric_writer-bad-kind",
        {"metric_writer": {"kind": "jsnol", "path": "m.jsonl"}},
        "metric_writer.kind",
        "did you mean 'jsonl'",
    ),
    (
        "metric_writer-bad-string",
        {"metric_writer": "metrics.jsonl"},
        "metric_writer",
        "metric_writer",
    ),
    ("metric_writer-bad-type", {"metric_writer": 42}, "metric_writer", "metric_writer"),
    (
        "metric_writer-bad-arguments",
        {"metric_writer": {"kind": "jsonl", "file": "m.jsonl"}},
        "metric_writer",
        "jsonl",
    ),
    (
        "backend_options-list",
        {"backend_options": ["steps_per_call", 4]},
        "backend_options",
        "backend_options",
    ),
    (
        "backend_options-non-str-key",
        {"backend_options": {1: 2}},
        "backend_options",
        "backend_options",
    ),
    ("sharding-garbage", {"sharding": "data-parallel"}, "sharding", "sharding"),
    ("sharding-dict", {"sharding": {"mesh": 1}}, "sharding", "ShardingSpec"),
    ("backend-unknown", {"backend": "nope"}, "backend", "known backends"),
]


@pytest.mark.parametrize(
    ("overrides", "field", "text"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_value_is_config_error_naming_the_field(
    overrides: dict[str, Any], field: str, text: str
) -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop(**{**BASE, **overrides})
    exc = info.value
    assert isinstance(exc, ValueError) and isinstance(exc, PipekitError)
    assert exc.field == field
    assert text in str(exc)
    # The message names the field in the user's terms (its last dotted part at least).
    assert field.split(".")[-1] in str(exc)


@pytest.mark.parametrize(
    ("build", "field"),
    [
        (lambda: Checkpoint(every_n_steps=0), "Checkpoint.every_n_steps"),
        (lambda: Checkpoint(keep_last=0), "Checkpoint.keep_last"),
        (lambda: EarlyStopping(mode="median"), "EarlyStopping.mode"),
        (lambda: EarlyStopping(patience=-1), "EarlyStopping.patience"),
        (lambda: EarlyStopping(patience=1.5), "EarlyStopping.patience"),
        (lambda: EarlyStopping(monitor=""), "EarlyStopping.monitor"),
        (lambda: EarlyStopping(min_delta=-0.1), "EarlyStopping.min_delta"),
    ],
    ids=[
        "ckpt-every",
        "ckpt-keep",
        "es-mode",
        "es-patience",
        "es-patience-float",
        "es-monitor",
        "es-min_delta",
    ],
)
def test_builtin_callback_arguments_are_validated(build: Any, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        build()
    assert info.value.field == field
    assert field in str(info.value)


def test_valid_loops_construct() -> None:
    TrainingLoop(**BASE)
    TrainingLoop(dataset=DATA, task=object())  # a task alone is enough
    TrainingLoop(dataset=DATA, loss=lambda p, t: (p - t) ** 2)  # any callable loss
    TrainingLoop(dataset=DATA, loss="mse", eval_every_n_steps=5, val_dataset=DATA)
    loop = TrainingLoop(
        dataset=DATA, loss="mse", callbacks=(Checkpoint(),), checkpoint_dir="/tmp/x"
    )
    assert isinstance(loop.callbacks, list)


def test_checkpoint_dir_alone_implies_a_default_checkpoint_callback() -> None:
    loop = TrainingLoop(**BASE, checkpoint_dir="/tmp/ck")
    assert loop.checkpoint_callback == Checkpoint()
    assert TrainingLoop(**BASE).checkpoint_callback is None


def test_path_like_checkpoint_dir_is_stored_as_str(tmp_path) -> None:
    loop = TrainingLoop(**BASE, checkpoint_dir=tmp_path / "ck")
    assert loop.checkpoint_dir == str(tmp_path / "ck")


def test_validation_does_not_import_the_backend() -> None:
    """Nothing backend-specific is checked at construction: a loop for a backend that is
    not installed builds fine (run() is where the backend is resolved)."""
    TrainingLoop(**BASE, backend="lightning", backend_options={"trainer": {"precision": 16}})


def test_dataset_may_be_left_out_only_by_a_task_that_brings_its_own_target() -> None:
    class OwnTarget:
        needs_dataset = False

    class NeedsRows:
        pass

    loop = TrainingLoop(task=OwnTarget(), backend="equinox")
    assert loop.dataset is None
    with pytest.raises(ConfigError) as info:
        TrainingLoop(task=NeedsRows(), backend="equinox")
    assert info.value.field == "dataset"
