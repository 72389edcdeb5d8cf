"""Unknown loss names are ConfigErrors listing the valid names with a hint."""

from __future__ import annotations

import pytest

from pipekit_train.errors import ConfigError
from pipekit_train.jax.losses import resolve_loss
from pipekit_train.losses import LOSS_NAMES, validate_loss


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("crossentropy", "cross_entropy"),
        ("cross_entropi", "cross_entropy"),
        ("mean_squared_error", "mse"),
        ("sparse_categorical_crossentropy", "cross_entropy"),
        ("binary_crossentropy", "binary_cross_entropy"),
        ("hubber", "huber"),
    ],
)
def test_unknown_name(name, hint):
    for check in (resolve_loss, validate_loss):
        with pytest.raises(ConfigError) as info:
            check(name)
        assert info.value.field == "TrainingLoop.loss"
        message = str(info.value)
        assert "TrainingLoop.loss" in message
        assert f"did you mean {hint!r}" in message
        assert all(valid in message for valid in LOSS_NAMES)


def test_field_can_be_renamed():
    with pytest.raises(ConfigError) as info:
        resolve_loss("nope", field="NumpyroTask.loss")
    assert info.value.field == "NumpyroTask.loss"


@pytest.mark.parametrize("bad", [3, None, ["mse"]])
def test_neither_name_nor_callable(bad):
    with pytest.raises(ConfigError) as info:
        resolve_loss(bad)
    assert info.value.field == "TrainingLoop.loss"
    assert "callable" in str(info.value)
