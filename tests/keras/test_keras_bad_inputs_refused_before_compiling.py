"""Every bad ``backend_options`` value on the keras backend — ``steps_per_execution`` (for
``compile``) and ``callbacks`` (for ``fit``) included — is a ``PipekitError`` naming the
field, raised before JAX compiles anything, with the files already in ``checkpoint_dir``
untouched. (The label cases are the data layer's, in their own file.)"""

from __future__ import annotations

from pathlib import Path

import keras
import pytest
from _keras_helpers import digits, mlp
from case_ids import case_id
from compile_watch import assert_refused_before_compiling, compiles
from user_files import plant

from pipekit_train import Callback, TrainingLoop
from pipekit_train.errors import ConfigError

CASES = [
    ({"steps_per_execution": 0}, "backend_options.steps_per_execution", "positive integer"),
    ({"steps_per_execution": "2"}, "backend_options.steps_per_execution", "positive integer"),
    ({"steps_per_execution": 2.5}, "backend_options.steps_per_execution", "positive integer"),
    ({"resume": "Never"}, "backend_options.resume", "did you mean 'never'"),
    ({"async_checkpointing": "no"}, "backend_options.async_checkpointing", "true or false"),
    ({"data_parallel": 1}, "backend_options.data_parallel", "true or false"),
    ({"compilation_cache": 3}, "backend_options.compilation_cache", "folder"),
    ({"callbacks": "EarlyStopping"}, "backend_options.callbacks", "keras.callbacks.Callback"),
    ({"callbacks": [Callback()]}, "backend_options.callbacks[0]", "TrainingLoop.callbacks"),
    (
        {"callbacks": [keras.callbacks.History(), print]},
        "backend_options.callbacks[1]",
        "keras.callbacks.Callback",
    ),
    (
        {"steps_per_executon": 2},
        "backend_options.steps_per_executon",
        "did you mean 'steps_per_execution'",
    ),
    ({"epochs": 3}, "backend_options.epochs", "steps_per_execution"),
]

MODEL = mlp()  # built once, outside the watch (building runs eager JAX ops)
DATA = digits(64)


def _loop(run_dir: Path, options: dict) -> TrainingLoop:
    return TrainingLoop(
        model_op=MODEL,
        dataset=DATA,
        loss="cross_entropy",
        batch_size=16,
        max_steps=2,
        backend="keras",
        checkpoint_dir=str(run_dir),
        backend_options=options,
    )


@pytest.mark.parametrize(("options", "field", "words"), CASES, ids=[case_id(c[0]) for c in CASES])
def test_refused(tmp_path: Path, options: dict, field: str, words: str) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = _loop(run_dir, options)
    assert_refused_before_compiling(loop.run, ConfigError, field, words, run_dir)


def test_the_watch_sees_a_good_run_compile(tmp_path: Path) -> None:
    loop = TrainingLoop(
        model_op=mlp(),
        dataset=DATA,
        loss="cross_entropy",
        batch_size=16,
        max_steps=2,
        backend="keras",
    )
    with compiles() as seen:
        loop.run()
    assert seen
