"""An optimiser the backend cannot map, or a keyword torch.optim does not take → ``ConfigError``."""

from __future__ import annotations

import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


def test_vocabulary_name_the_backend_cannot_map(no_fit) -> None:
    with pytest.raises(ConfigError, match="lightning backend has no optimiser 'lion'") as err:
        loop(optimizer_config={"name": "lion", "lr": 1e-3}).run()
    assert err.value.field == "optimizer_config.name"
    assert "adamw" in str(err.value)


def test_unknown_name_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match="unknown optimiser 'adamm'.*did you mean 'adam") as err:
        loop(optimizer_config={"name": "adamm", "lr": 1e-3})
    assert err.value.field == "optimizer_config.name"


def test_keyword_torch_does_not_take(no_fit) -> None:
    with pytest.raises(ConfigError, match="torch.optim.SGD has no argument 'b3'") as err:
        loop(optimizer_config={"name": "sgd", "lr": 1e-3, "b3": 0.5}).run()
    assert err.value.field == "optimizer_config.b3"


def test_bad_keyword_value_is_config_error(no_fit) -> None:
    with pytest.raises(ConfigError, match="refuses it") as err:
        loop(optimizer_config={"name": "adam", "lr": 1e-3, "eps": -1.0}).run()
    assert err.value.field == "optimizer_config"
