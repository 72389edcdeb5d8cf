"""`TrainingLoop(loss=…)` and the backends' resolution share one loss-name check: the same
names are accepted everywhere, and a name from another library (`bce`, `MSE`,
`mean_squared_error`) gets the same alias-based suggestion at construction as at run time."""

from __future__ import annotations

import pytest

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.losses import LOSS_NAMES, validate_loss

DATA = {"x": [0.0, 1.0], "y": [0.0, 1.0]}


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("bce", "binary_cross_entropy"),  # closest() alone would say 'huber'
        ("BCE", "binary_cross_entropy"),
        ("mean_squared_error", "mse"),
        ("MSE", "mse"),
        ("Cross_Entropy", "cross_entropy"),
        ("categorical_crossentropy", "cross_entropy"),
    ],
)
def test_construction_suggests_like_the_backends(name: str, hint: str) -> None:
    with pytest.raises(ConfigError) as at_construction:
        TrainingLoop(dataset=DATA, loss=name)
    with pytest.raises(ConfigError) as at_resolution:
        validate_loss(name)
    assert f"did you mean {hint!r}" in str(at_construction.value)
    assert f"did you mean {hint!r}" in str(at_resolution.value)
    assert at_construction.value.field == "loss"
    assert "TrainingLoop.loss" in str(at_construction.value)


@pytest.mark.parametrize("name", LOSS_NAMES)
def test_every_name_is_accepted_at_construction(name: str) -> None:
    assert TrainingLoop(dataset=DATA, loss=name).loss == name
