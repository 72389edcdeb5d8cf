"""A bad population member is a ``ConfigError`` naming ``members[i].<key>``, raised before
JAX compiles anything, with the files in ``checkpoint_dir`` untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _eqx_helpers import tiny_loop
from compile_watch import assert_refused_before_compiling
from user_files import plant

from pipekit_train.adapters.equinox import run_population
from pipekit_train.errors import ConfigError

GOOD = {"optimizer_config.lr": 1e-2}

CASES: list[tuple[dict[str, Any], Any, str, str]] = [
    ({}, [GOOD, {"batch_size": 32}], "members[1].batch_size", "injectable at run time"),
    ({}, [{"optimizer_config.lr": "fast"}], "members[0].optimizer_config.lr", "finite number"),
    ({}, [GOOD, {"optimizer_config.lr": float("nan")}], "members[1].optimizer_config.lr", "finite"),
    ({}, [{"seed": True}], "members[0].seed", "integer"),
    ({}, [{"seed": 1.5}], "members[0].seed", "integer"),
    (
        {},
        [GOOD, {"optimizer_config.name": "sgd"}],
        "members[1].optimizer_config.name",
        "injectable",
    ),
    ({}, [{"optimizer_config.lr": -1.0}], "members[0].optimizer_config.lr", "optimizer_config.lr"),
    (
        {},
        [{"optimizer_config.lr.init_value": 0.1}],
        "members[0].optimizer_config.lr.init_value",
        "not a schedule dict",
    ),
    (
        {"optimizer_config": {"name": "sgd", "lr": 0.1, "weight_decay": 0.01}},
        [{"optimizer_config.weight_decay": 0.1}, {"optimizer_config.weight_decay": 0.0}],
        "members[0].optimizer_config.weight_decay",
        "add_decayed_weights",
    ),
    (
        {"optimizer_config": {"name": "sgd", "lr": 0.1}},
        [{"optimizer_config.nesterov": 1.0}, {}],
        "members[0].optimizer_config.nesterov",
        "every member has it",
    ),
    ({}, [], "members", "at least one"),
    ({}, {"seed": 1}, "members", "list of override mappings"),
    ({}, [["seed", 1]], "members[0]", "mapping of dotted overrides"),
    ({"backend": "keras"}, [GOOD], "backend", "equinox backend only"),
]


@pytest.mark.parametrize(
    ("fields", "members", "field", "words"), CASES, ids=[f"{c[2]}-{i}" for i, c in enumerate(CASES)]
)
def test_bad_member_refused(
    tmp_path: Path, fields: dict[str, Any], members: Any, field: str, words: str
) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = tiny_loop(checkpoint_dir=str(run_dir), **fields)  # builds the model outside the watch
    assert_refused_before_compiling(
        lambda: run_population(loop, members), ConfigError, field, words, run_dir
    )
