"""Each ``lr`` schedule gives the hand-computed value at a few steps."""

from __future__ import annotations

import math

import pytest

from pipekit_train.jax.optim import resolve_schedule
from pipekit_train.optimizers import SCHEDULES, parse_optimizer_config

MAX_STEPS = 100


def schedule_of(lr, max_steps=MAX_STEPS):
    spec = parse_optimizer_config({"name": "adam", "lr": lr}, max_steps=max_steps)
    return resolve_schedule(spec.lr, max_steps=max_steps)


CASES = [
    ({"schedule": "constant", "value": 0.1}, {0: 0.1, 50: 0.1, 10_000: 0.1}),
    (
        {"schedule": "cosine_decay", "init_value": 1.0, "decay_steps": 100},
        {0: 1.0, 25: (1 + math.cos(math.pi / 4)) / 2, 50: 0.5, 100: 0.0, 150: 0.0},
    ),
    # decay_steps defaults to max_steps (100)
    (
        {"schedule": "cosine_decay", "init_value": 2.0, "alpha": 0.1},
        {0: 2.0, 50: 2.0 * (0.1 + 0.9 * 0.5), 100: 0.2},
    ),
    (
        {
            "schedule": "warmup_cosine_decay",
            "init_value": 0.0,
            "peak_value": 1.0,
            "warmup_steps": 10,
            "decay_steps": 110,
            "end_value": 0.0,
        },
        {0: 0.0, 5: 0.5, 10: 1.0, 60: 0.5, 110: 0.0},
    ),
    (
        {
            "schedule": "exponential_decay",
            "init_value": 1.0,
            "transition_steps": 10,
            "decay_rate": 0.5,
        },
        {0: 1.0, 5: 0.5**0.5, 10: 0.5, 20: 0.25},
    ),
    (
        {
            "schedule": "exponential_decay",
            "init_value": 1.0,
            "transition_steps": 10,
            "decay_rate": 0.5,
            "staircase": True,
            "transition_begin": 5,
        },
        {0: 1.0, 14: 1.0, 15: 0.5, 24: 0.5, 25: 0.25},
    ),
    # transition_steps defaults to max_steps (100)
    ({"schedule": "linear", "init_value": 1.0, "end_value": 0.0}, {0: 1.0, 25: 0.75, 100: 0.0}),
    (
        {
            "schedule": "linear",
            "init_value": 0.0,
            "end_value": 1.0,
            "transition_steps": 10,
            "transition_begin": 10,
        },
        {0: 0.0, 10: 0.0, 15: 0.5, 20: 1.0, 30: 1.0},
    ),
    (
        {
            "schedule": "piecewise_constant",
            "init_value": 1.0,
            "boundaries_and_scales": {10: 0.1, 20: 0.5},
        },
        {0: 1.0, 9: 1.0, 10: 0.1, 19: 0.1, 20: 0.05},
    ),
    # string step keys (JSON, quoted YAML) are accepted
    (
        {"schedule": "piecewise_constant", "init_value": 1.0, "boundaries_and_scales": {"10": 0.1}},
        {9: 1.0, 10: 0.1},
    ),
]


@pytest.mark.parametrize(("lr", "expected"), CASES, ids=[c[0]["schedule"] for c in CASES])
def test_schedule_values(lr, expected):
    schedule = schedule_of(lr)
    for step, value in expected.items():
        assert float(schedule(step)) == pytest.approx(value, rel=1e-5, abs=1e-6), step


def test_every_schedule_is_covered():
    assert {c[0]["schedule"] for c in CASES} == set(SCHEDULES)


def test_plain_number_is_a_constant_rate():
    assert schedule_of(3e-4) == pytest.approx(3e-4)


def test_numeric_string_from_yaml_is_accepted():
    # YAML 1.1 reads ``lr: 1e-3`` as the string "1e-3".
    assert schedule_of("1e-3") == pytest.approx(1e-3)


def test_max_steps_default_is_filled_at_resolve_time():
    spec = parse_optimizer_config(
        {"name": "adam", "lr": {"schedule": "linear", "init_value": 1.0, "end_value": 0.0}}
    )
    assert "transition_steps" not in spec.lr
    schedule = resolve_schedule(spec.lr, max_steps=10)
    assert float(schedule(5)) == pytest.approx(0.5)
