"""An unknown loss name → ``ConfigError`` naming ``loss`` with the fix (before anything runs)."""

from __future__ import annotations

import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


def test_unknown_loss_name_is_config_error_with_a_suggestion() -> None:
    with pytest.raises(
        ConfigError, match="unknown loss 'bce'.*did you mean 'binary_cross_entropy'"
    ) as err:
        loop(loss="bce")
    assert err.value.field == "loss"


def test_loss_that_is_neither_name_nor_callable_is_config_error() -> None:
    with pytest.raises(ConfigError, match="must be a loss name") as err:
        loop(loss=3)
    assert err.value.field == "loss"


def test_callable_loss_returning_a_vector_is_config_error(no_fit) -> None:
    import torch.nn.functional as F

    def per_example(pred, target):
        return F.cross_entropy(pred, target, reduction="none")

    with pytest.raises(ConfigError, match="must return a scalar tensor") as err:
        loop(loss=per_example).run()
    assert err.value.field == "loss"
