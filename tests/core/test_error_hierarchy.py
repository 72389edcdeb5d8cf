"""Real user mistakes are caught by the handlers a caller would naturally write: a bad field
by `except ValueError` (carrying the field), a missing backend by `except ImportError` (with
the install command), a fatal training condition by `except PipekitError` but not by
`except ValueError`; and the CLI turns any of them into exit code 2 without a traceback."""

from __future__ import annotations

import math

import pytest
from _core_helpers import registered_backends, run_module_cli
from _core_toy_backend import ToyData, ToyProgram, toy_loop

from pipekit_train import PipekitError, TerminateOnNaN, TrainingError, TrainingLoop
from pipekit_train.engine import run_driver
from pipekit_train.registry import load_backend

DATA = {"x": [0.0, 1.0], "y": [0.0, 1.0]}


def test_a_bad_field_is_caught_as_value_error_naming_it() -> None:
    try:
        TrainingLoop(dataset=DATA, loss="mse", batch_size=0)
    except ValueError as exc:
        assert isinstance(exc, PipekitError)
        assert getattr(exc, "field", None) == "batch_size"
        assert "batch_size" in str(exc)
    else:
        pytest.fail("batch_size=0 was accepted")


def test_a_missing_backend_is_caught_as_import_error_with_the_command() -> None:
    if "keras" in registered_backends():
        pytest.skip("a keras backend is registered here")
    try:
        load_backend("keras")
    except ImportError as exc:
        assert isinstance(exc, PipekitError)
        assert "pip install pipekit-train-keras" in str(exc)
    else:
        pytest.fail("loading an unregistered backend succeeded")


def test_a_fatal_training_condition_is_not_a_value_error() -> None:
    loop = toy_loop(max_steps=20, log_every_n_steps=5, callbacks=[TerminateOnNaN()])
    program = ToyProgram(loss_at=lambda s, p, b: math.nan if s >= 7 else 0.0)
    with pytest.raises(PipekitError) as info:
        try:
            run_driver(loop, program, 0.0, data=ToyData(), checkpointer=None)
        except ValueError:  # a handler for bad values must not swallow it
            pytest.fail("TrainingError was caught by `except ValueError`")
    assert isinstance(info.value, TrainingError) and "7" in str(info.value)


def test_the_cli_reports_a_pipekit_error_with_exit_code_2(tmp_path) -> None:
    loop = tmp_path / "loop.yaml"
    loop.write_text("dataset: '_core_factories:make_dataset'\nloss: mse\nbackend: kerass\n")
    result = run_module_cli("run", str(loop), "--no-progress")
    assert result.returncode == 2
    assert "ConfigError" in result.stderr and "did you mean 'keras'" in result.stderr
    assert "Traceback" not in result.stderr
