"""Every malformed ``optimizer_config`` is a ConfigError naming the field."""

from __future__ import annotations

import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.jax.optim import resolve_optimizer
from pipekit_train.optimizers import OPTIMIZER_NAMES, SCHEDULES, validate_optimizer_config

LR = "optimizer_config.lr"

# (id, config, expected .field, fragments the message must contain)
CASES = [
    ("not-a-dict", ["adam"], "optimizer_config", ["optimizer_config must be a dict"]),
    ("missing-name", {"lr": 1e-3}, "optimizer_config.name", ["missing", "adamw", "lion"]),
    (
        "unknown-name",
        {"name": "adamm", "lr": 1e-3},
        "optimizer_config.name",
        ["'adamm'", "did you mean 'adam'", "adafactor", "rmsprop"],
    ),
    ("name-not-str", {"name": 3, "lr": 1e-3}, "optimizer_config.name", ["unknown optimiser 3"]),
    ("missing-lr", {"name": "adam"}, LR, ["missing", "cosine_decay"]),
    ("negative-lr", {"name": "adam", "lr": -0.1}, LR, ["> 0", "-0.1"]),
    ("zero-lr", {"name": "adam", "lr": 0}, LR, ["> 0"]),
    ("nan-lr", {"name": "adam", "lr": float("nan")}, LR, ["finite"]),
    ("bool-lr", {"name": "adam", "lr": True}, LR, ["True"]),
    ("word-lr", {"name": "adam", "lr": "fast"}, LR, ["'fast'"]),
    (
        "both-lr-keys",
        {"name": "adam", "lr": 1e-3, "learning_rate": 1e-3},
        "optimizer_config.learning_rate",
        ["both 'lr' and 'learning_rate'"],
    ),
    ("bad-alias", {"name": "adam", "learning_rate": -1}, "optimizer_config.learning_rate", ["> 0"]),
    (
        "schedule-key-missing",
        {"name": "adam", "lr": {"init_value": 1e-3}},
        f"{LR}.schedule",
        ["no 'schedule' key", "warmup_cosine_decay"],
    ),
    (
        "unknown-schedule",
        {"name": "adam", "lr": {"schedule": "cosine", "init_value": 1.0}},
        f"{LR}.schedule",
        ["'cosine'", "did you mean 'cosine_decay'", "piecewise_constant"],
    ),
    (
        "missing-field",
        {
            "name": "adam",
            "lr": {"schedule": "exponential_decay", "init_value": 1.0, "decay_rate": 0.5},
        },
        f"{LR}.transition_steps",
        ["missing", "required: init_value, transition_steps, decay_rate"],
    ),
    (
        "missing-peak",
        {
            "name": "adam",
            "lr": {
                "schedule": "warmup_cosine_decay",
                "init_value": 0.0,
                "warmup_steps": 5,
                "decay_steps": 50,
            },
        },
        f"{LR}.peak_value",
        ["required: init_value, peak_value, warmup_steps, decay_steps"],
    ),
    (
        "missing-constant-value",
        {"name": "adam", "lr": {"schedule": "constant"}},
        f"{LR}.value",
        ["required: value"],
    ),
    (
        "unknown-field",
        {"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1.0, "decay_step": 10}},
        f"{LR}.decay_step",
        ["did you mean 'decay_steps'", "optional: alpha, exponent"],
    ),
    (
        "warmup-too-long",
        {
            "name": "adam",
            "lr": {
                "schedule": "warmup_cosine_decay",
                "init_value": 0.0,
                "peak_value": 1.0,
                "warmup_steps": 50,
                "decay_steps": 50,
            },
        },
        f"{LR}.warmup_steps",
        ["smaller than decay_steps"],
    ),
    (
        "zero-decay-steps",
        {"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1.0, "decay_steps": 0}},
        f"{LR}.decay_steps",
        ["integer >= 1"],
    ),
    (
        "fractional-steps",
        {
            "name": "adam",
            "lr": {
                "schedule": "linear",
                "init_value": 1.0,
                "end_value": 0.0,
                "transition_steps": 2.5,
            },
        },
        f"{LR}.transition_steps",
        ["integer"],
    ),
    (
        "negative-init",
        {"name": "adam", "lr": {"schedule": "linear", "init_value": -1.0, "end_value": 0.0}},
        f"{LR}.init_value",
        [">= 0"],
    ),
    (
        "staircase-not-bool",
        {
            "name": "adam",
            "lr": {
                "schedule": "exponential_decay",
                "init_value": 1.0,
                "transition_steps": 10,
                "decay_rate": 0.5,
                "staircase": "yes",
            },
        },
        f"{LR}.staircase",
        ["true or false"],
    ),
    (
        "bad-boundaries",
        {
            "name": "adam",
            "lr": {
                "schedule": "piecewise_constant",
                "init_value": 1.0,
                "boundaries_and_scales": [100, 0.1],
            },
        },
        f"{LR}.boundaries_and_scales",
        ["mapping"],
    ),
    (
        "negative-boundary-scale",
        {
            "name": "adam",
            "lr": {
                "schedule": "piecewise_constant",
                "init_value": 1.0,
                "boundaries_and_scales": {10: -0.1},
            },
        },
        f"{LR}.boundaries_and_scales[10]",
        [">= 0"],
    ),
    (
        "zero-clip-norm",
        {"name": "adam", "lr": 1e-3, "clip_norm": 0},
        "optimizer_config.clip_norm",
        ["> 0"],
    ),
    (
        "negative-weight-decay",
        {"name": "adamw", "lr": 1e-3, "weight_decay": -0.1},
        "optimizer_config.weight_decay",
        [">= 0"],
    ),
    (
        "adafactor-decay-twice",
        {"name": "adafactor", "lr": 1e-3, "weight_decay": 0.1, "weight_decay_rate": 0.1},
        "optimizer_config.weight_decay_rate",
        ["same setting"],
    ),
]


@pytest.mark.parametrize(
    ("config", "field", "fragments"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_validate_rejects_with_field(config, field, fragments):
    with pytest.raises(ConfigError) as info:
        validate_optimizer_config(config, max_steps=100)
    assert info.value.field == field
    assert field in str(info.value)
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(("config", "field"), [c[1:3] for c in CASES], ids=[c[0] for c in CASES])
def test_resolve_rejects_the_same_way(config, field):
    with pytest.raises(ConfigError) as info:
        resolve_optimizer(config, max_steps=100)
    assert info.value.field == field


def test_warmup_longer_than_max_steps_default_is_reported():
    config = {
        "name": "adam",
        "lr": {
            "schedule": "warmup_cosine_decay",
            "init_value": 0.0,
            "peak_value": 1.0,
            "warmup_steps": 200,
        },
    }
    validate_optimizer_config(config)  # max_steps unknown: cannot tell yet
    with pytest.raises(ConfigError) as info:
        validate_optimizer_config(config, max_steps=100)
    assert info.value.field == f"{LR}.warmup_steps"
    assert "taken from max_steps" in str(info.value)


def test_max_steps_default_fields_may_be_omitted_without_max_steps():
    validate_optimizer_config(
        {"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1.0}}
    )
    validate_optimizer_config(
        {"name": "adam", "lr": {"schedule": "linear", "init_value": 1.0, "end_value": 0.0}}
    )


def test_exponential_decay_has_no_max_steps_default():
    with pytest.raises(ConfigError) as info:
        validate_optimizer_config(
            {
                "name": "adam",
                "lr": {"schedule": "exponential_decay", "init_value": 1.0, "decay_rate": 0.5},
            },
            max_steps=100,
        )
    assert info.value.field == f"{LR}.transition_steps"


def test_config_error_is_a_value_error():
    with pytest.raises(ValueError):
        validate_optimizer_config({"name": "nope", "lr": 1.0})


# ------------------------------------------------------------- resolve-time checks


@pytest.mark.parametrize(
    ("config", "field", "hint"),
    [
        ({"name": "adam", "lr": 1e-3, "beta1": 0.9}, "optimizer_config.beta1", "'b1'"),
        ({"name": "sgd", "lr": 1e-3, "momentun": 0.9}, "optimizer_config.momentun", "'momentum'"),
        ({"name": "lion", "lr": 1e-3, "eps": 1e-8}, "optimizer_config.eps", None),
    ],
)
def test_unknown_optimizer_kwarg_names_the_key(config, field, hint):
    validate_optimizer_config(config)  # pure validation leaves kwargs to resolve time
    with pytest.raises(ConfigError) as info:
        resolve_optimizer(config, max_steps=10)
    assert info.value.field == field
    assert f"optax.{config['name']} has no argument" in str(info.value)
    if hint:
        assert f"did you mean {hint}" in str(info.value)


def test_bad_kwarg_value_fails_at_resolve_time_not_mid_run():
    with pytest.raises(ConfigError) as info:
        resolve_optimizer({"name": "sgd", "lr": 1e-3, "momentum": "lots"}, max_steps=10)
    assert info.value.field == "optimizer_config"
    assert "optax.sgd" in str(info.value)


def test_every_name_and_schedule_is_listed_in_errors():
    with pytest.raises(ConfigError) as info:
        validate_optimizer_config({"name": "zzz", "lr": 1.0})
    assert all(name in str(info.value) for name in OPTIMIZER_NAMES)
    with pytest.raises(ConfigError) as info:
        validate_optimizer_config({"name": "adam", "lr": {"schedule": "zzz"}})
    assert all(name in str(info.value) for name in SCHEDULES)
