"""A bad sweep (unknown field path, bad distribution, missing objective, a population it
cannot run) is a ConfigError naming the field, raised before anything runs or is written.

Pure Python: building a ``Sweep`` checks everything but the sampler and pruner names
(those need Optuna, tests/core_jax) without importing Optuna or an array library.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from pipekit_train.errors import ConfigError
from pipekit_train.sweep import Sweep, load_sweep

BASE: dict[str, Any] = {
    "backend": "equinox",
    "model_op": {"factory": "mod:make_model", "kwargs": {"hidden": 16}},
    "dataset": "mod:load",
    "loss": "cross_entropy",
    "max_steps": 10,
}
LR = {"type": "float", "low": 1e-4, "high": 1e-2, "log": True}


def _sweep(tmp_path: Path, space: Any, **kw: Any) -> Sweep:
    return Sweep(
        loop=kw.pop("loop", BASE),
        space=space,
        objective=kw.pop("objective", "loss"),
        folder=tmp_path / "sw",
        **kw,
    )


@pytest.mark.parametrize(
    ("space", "field", "words"),
    [
        ({"optimiser_config.lr": LR}, "space.optimiser_config.lr", "optimizer_config"),
        (
            {"optimizer_config.lr": {"type": "gaussian"}},
            "space.optimizer_config.lr.type",
            "float, int, categorical",
        ),
        ({"seed": {"type": "int", "low": 5, "high": 1}}, "space.seed.low", "above high"),
        (
            {"optimizer_config.lr": {"type": "float", "low": 0.0, "high": 1.0, "log": True}},
            "space.optimizer_config.lr.low",
            "low > 0",
        ),
        ({"seed": {"type": "int", "low": 0, "high": 3, "step": 0}}, "space.seed.step", "positive"),
        ({"seed": {"type": "int", "low": 0.5, "high": 3}}, "space.seed.low", "an integer"),
        ({"seed": {"type": "categorical", "choices": []}}, "space.seed.choices", "non-empty"),
        (
            {"seed": {"type": "float", "low": 0, "high": 1, "choices": [1]}},
            "space.seed.choices",
            "unknown key",
        ),
        (
            {"max_steps.x": {"type": "int", "low": 1, "high": 3}},
            "space.max_steps.x",
            "not a mapping",
        ),
        (
            {"batch_size": {"type": "float", "low": 1.0, "high": 2.0}},
            "batch_size",
            "positive integer",
        ),
        ({}, "space", "non-empty"),
    ],
)
def test_bad_space_names_the_field(tmp_path: Path, space: Any, field: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        _sweep(tmp_path, space)
    assert info.value.field == field, str(info.value)
    assert words in str(info.value)
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize(
    ("kw", "field"),
    [
        ({"objective": ""}, "objective"),
        ({"direction": "up"}, "direction"),
        ({"n_trials": 0}, "n_trials"),
        ({"timeout": -1}, "timeout"),
        ({"sampler": {"name": "TPESampler", "args": {}}}, "sampler"),
        ({"pruner": 3}, "pruner"),
    ],
)
def test_bad_settings_name_the_field(tmp_path: Path, kw: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as info:
        _sweep(tmp_path, {"optimizer_config.lr": LR}, **kw)
    assert info.value.field == field


def test_population_is_refused_off_equinox_and_over_non_injectable_fields(
    tmp_path: Path,
) -> None:
    svi = {**BASE, "backend": "numpyro-svi", "model_op": None, "task": "mod:task", "loss": None}
    with pytest.raises(ConfigError, match="numpyro-svi") as info:
        _sweep(tmp_path, {"optimizer_config.lr": LR}, loop=svi, population=4)
    assert info.value.field == "population"
    hidden = {"model_op.kwargs.hidden": {"type": "int", "low": 8, "high": 32}}
    with pytest.raises(ConfigError, match="injectable") as info:
        _sweep(tmp_path, {"optimizer_config.lr": LR, **hidden}, population=4)
    assert info.value.field == "space.model_op.kwargs.hidden"
    ok = _sweep(
        tmp_path,
        {"optimizer_config.lr": LR, "seed": {"type": "int", "low": 0, "high": 9}},
        population=4,
    )
    assert ok.population == 4


def _file(tmp_path: Path, data: dict[str, Any]) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_a_sweep_file_missing_its_objective_or_with_an_unknown_key_names_it(
    tmp_path: Path,
) -> None:
    good = {"loop": BASE, "space": {"optimizer_config.lr": LR}, "objective": "loss"}
    missing = {k: v for k, v in good.items() if k != "objective"}
    with pytest.raises(ConfigError, match="objective") as info:
        load_sweep(_file(tmp_path, missing))
    assert info.value.field == "objective"
    with pytest.raises(ConfigError, match="n_trials") as info:
        load_sweep(_file(tmp_path, {**good, "n_trails": 3}))
    assert info.value.field == "n_trails"
    with pytest.raises(ConfigError, match="does not exist") as info:
        load_sweep(_file(tmp_path, {**good, "loop": "nowhere.yaml"}))
    assert info.value.field == "loop"
    sweep = load_sweep(_file(tmp_path, good))
    assert str(sweep.folder) == "runs/s" and sweep.params[0].path == "optimizer_config.lr"
