"""Every bad ``backend_options`` value (and a few loop fields) on the Equinox backend is a
``PipekitError`` naming the field, raised before JAX compiles anything, with the files
already in ``checkpoint_dir`` untouched."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from _eqx_helpers import run_loop, tiny_loop
from compile_watch import assert_refused_before_compiling, compiles
from user_files import plant

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

CASES = [
    ({"step_per_call": 4}, "backend_options.step_per_call", "did you mean 'steps_per_call'"),
    ({"steps_per_call": 0}, "backend_options.steps_per_call", "integer >= 1"),
    ({"steps_per_call": "7"}, "backend_options.steps_per_call", "integer >= 1"),
    ({"steps_per_call": 2.0}, "backend_options.steps_per_call", "integer >= 1"),
    ({"worker_count": -1}, "backend_options.worker_count", "integer >= 0"),
    ({"resume": "sometimes"}, "backend_options.resume", "'never'"),
    ({"resume": "Auto"}, "backend_options.resume", "did you mean 'auto'"),
    ({"shuffle": "yes"}, "backend_options.shuffle", "true or false"),
    ({"async_checkpointing": 1}, "backend_options.async_checkpointing", "true or false"),
    ({"compilation_cache": 5}, "backend_options.compilation_cache", "folder"),
    ({"optimizer_id": ""}, "backend_options.optimizer_id", "non-empty string"),
    ({"trainer_kwargs": {}}, "backend_options.trainer_kwargs", "steps_per_call"),
]


def _loop(run_dir: Path, **kw: Any) -> Any:
    return tiny_loop(checkpoint_dir=str(run_dir), **kw)


@pytest.mark.parametrize(("options", "field", "words"), CASES, ids=[c[1] for c in CASES])
def test_bad_backend_option(tmp_path: Path, options: dict, field: str, words: str) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = _loop(run_dir, backend_options=options)  # builds the model: eager JAX ops
    assert_refused_before_compiling(lambda: run_loop(loop), ConfigError, field, words, run_dir)


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"max_steps": 0}, "max_steps"), ({"log_every_n_steps": -1}, "log_every_n_steps")],
)
def test_bad_loop_field(tmp_path: Path, fields: dict, field: str) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    good = _loop(run_dir)  # builds the model (eager JAX ops) outside the watch
    kwargs = {f.name: getattr(good, f.name) for f in dataclasses.fields(good) if f.init}
    assert_refused_before_compiling(
        lambda: run_loop(TrainingLoop(**{**kwargs, **fields})),
        ConfigError,
        field,
        f"TrainingLoop.{field}",
        run_dir,
    )


def test_the_watch_sees_a_good_run_compile(tmp_path: Path) -> None:
    with compiles() as seen:
        run_loop(tiny_loop(max_steps=2, backend_options={"steps_per_call": 2}))
    assert seen
