"""Suggestions ignore case: `adamW` suggests `adamw` (not `adam`), spelled as the valid name,
both from `closest()` and from a real `TrainingLoop` optimiser error."""

from __future__ import annotations

import pytest

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.errors import closest


def test_case_only_difference_suggests_that_name() -> None:
    assert closest("adamW", ["adam", "adamw", "sgd"]) == " (did you mean 'adamw'?)"
    assert closest("SGD", ["adam", "adamw", "sgd"]) == " (did you mean 'sgd'?)"


def test_suggestion_keeps_the_valid_spelling() -> None:
    assert closest("batchsize", ["Batch_Size"]) == " (did you mean 'Batch_Size'?)"
    assert closest("zzz", ["adam"]) == ""


def test_optimizer_name_in_another_case() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop(
            dataset={"x": [0.0], "y": [0.0]}, loss="mse", optimizer_config={"name": "adamW"}
        )
    assert "did you mean 'adamw'" in str(info.value)
