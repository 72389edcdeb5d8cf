"""The error hierarchy: every deliberate error is a PipekitError and also the builtin a
caller would naturally catch; ConfigError carries the offending field."""

from __future__ import annotations

import pytest

import pipekit_train
from pipekit_train import (
    BackendNotInstalledError,
    CheckpointError,
    ConfigError,
    DataError,
    PipekitError,
    TrainingError,
)
from pipekit_train.errors import closest


@pytest.mark.parametrize(
    ("cls", "builtin"),
    [
        (ConfigError, ValueError),
        (DataError, ValueError),
        (BackendNotInstalledError, ImportError),
        (CheckpointError, Exception),
        (TrainingError, Exception),
    ],
)
def test_each_error_is_a_pipekit_error_and_its_builtin(cls: type, builtin: type) -> None:
    assert issubclass(cls, PipekitError)
    assert issubclass(cls, builtin)
    assert issubclass(PipekitError, Exception)


def test_only_the_intended_builtins() -> None:
    assert not issubclass(CheckpointError, ValueError)
    assert not issubclass(TrainingError, ValueError)
    assert not issubclass(BackendNotInstalledError, ValueError)
    assert not issubclass(ConfigError, ImportError)


def test_config_error_carries_the_field() -> None:
    exc = ConfigError("TrainingLoop.batch_size must be positive", field="batch_size")
    assert exc.field == "batch_size"
    assert str(exc) == "TrainingLoop.batch_size must be positive"
    assert ConfigError("no field").field is None
    with pytest.raises(ValueError):
        raise exc


def test_errors_are_exported_from_the_package() -> None:
    for name in (
        "PipekitError",
        "ConfigError",
        "BackendNotInstalledError",
        "CheckpointError",
        "DataError",
        "TrainingError",
    ):
        assert getattr(pipekit_train, name) is getattr(pipekit_train.errors, name)
        assert name in pipekit_train.__all__


def test_closest_suggests_only_near_names() -> None:
    assert closest("batch_sise", ["batch_size", "max_steps"]) == " (did you mean 'batch_size'?)"
    assert closest("zzzz", ["batch_size", "max_steps"]) == ""
