"""The optimiser vocabulary is core's and imports no array library; a backend that cannot map
a name rejects it with a ConfigError that lists what that backend supports."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError
from pipekit_train.optimizers import (
    OPTIMIZER_NAMES,
    SCHEDULES,
    parse_optimizer_config,
    require_supported,
    schedule_length_from_max_steps,
)


def test_vocabulary_is_pure_python():
    assert {"adam", "adamw", "sgd", "rmsprop", "lion"} <= set(OPTIMIZER_NAMES)
    assert "cosine_decay" in SCHEDULES
    code = (
        "import sys, pipekit_train.optimizers as o; o.parse_optimizer_config("
        "{'name': 'adam', 'lr': 1e-3}); "
        "print([m for m in ('jax', 'optax', 'torch', 'keras', 'numpy') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_construction_accepts_any_vocabulary_name_for_any_backend():
    loop = TrainingLoop(
        dataset={"x": [0.0], "y": [0.0]},
        loss="mse",
        backend="lightning",
        optimizer_config={"name": "lion", "lr": 1e-4},
    )
    assert loop.optimizer_config["name"] == "lion"


def test_a_backend_rejects_what_it_cannot_map():
    spec = parse_optimizer_config({"name": "lion", "lr": 1e-4})
    torch_like = {"adam", "adamw", "sgd", "rmsprop"}
    with pytest.raises(ConfigError) as info:
        require_supported(spec, torch_like, backend="lightning")
    assert info.value.field == "optimizer_config.name"
    message = str(info.value)
    assert "lightning backend has no optimiser 'lion'" in message
    assert "adam, adamw, rmsprop, sgd" in message
    require_supported(parse_optimizer_config({"name": "sgd", "lr": 0.1}), torch_like, backend="x")


def test_spec_is_normalised_numbers_and_resolved_lengths():
    yaml_spec = parse_optimizer_config({"name": "adam", "lr": "1e-3"}, max_steps=10)
    py_spec = parse_optimizer_config({"name": "adam", "lr": 0.001}, max_steps=10)
    assert yaml_spec.to_dict() == py_spec.to_dict() and yaml_spec.lr == 0.001
    cosine = {"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1e-3}}
    assert parse_optimizer_config(cosine, max_steps=40).to_dict()["lr"]["decay_steps"] == 40
    assert schedule_length_from_max_steps(cosine) == "optimizer_config.lr.decay_steps"
    given = {"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1, "decay_steps": 5}}
    assert schedule_length_from_max_steps(given) is None
    assert schedule_length_from_max_steps({"name": "adam", "lr": 1e-3}) is None
