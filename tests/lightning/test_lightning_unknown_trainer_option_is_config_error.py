"""A ``backend_options`` key Lightning's Trainer does not know → ``ConfigError`` naming it."""

from __future__ import annotations

import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


def test_misspelt_trainer_option_names_it_and_suggests(no_fit) -> None:
    with pytest.raises(
        ConfigError, match="Trainer has no option 'precison'.*did you mean 'precision'"
    ) as err:
        loop(backend_options={"precison": "bf16-mixed"}).run()
    assert err.value.field == "backend_options.precison"


def test_option_pipekit_owns_points_to_the_loop_field(no_fit) -> None:
    with pytest.raises(ConfigError, match="use TrainingLoop.max_steps instead") as err:
        loop(backend_options={"max_epochs": 3}).run()
    assert err.value.field == "backend_options.max_epochs"


def test_bad_resume_value(no_fit) -> None:
    with pytest.raises(ConfigError, match="backend_options.resume must be one of") as err:
        loop(backend_options={"resume": "yes"}).run()
    assert err.value.field == "backend_options.resume"
