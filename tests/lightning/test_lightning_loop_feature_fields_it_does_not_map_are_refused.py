"""The loop's training-feature fields that the lightning backend does not map yet
(``accumulate_steps``, ``ema_decay``, ``precision``; Lightning's own
``accumulate_grad_batches`` and ``precision`` go in ``backend_options``) are refused by name
before ``Trainer.fit``, instead of being ignored."""

from __future__ import annotations

import pytest
from _lightning_helpers import loop

from pipekit_train.errors import ConfigError


@pytest.mark.parametrize(
    ("field", "value"),
    [("accumulate_steps", 4), ("ema_decay", 0.99), ("precision", "mixed-bfloat16")],
)
def test_refused_before_fit(field, value, no_fit) -> None:
    with pytest.raises(ConfigError, match="not supported by the lightning backend") as e:
        loop(**{field: value}).run()
    assert e.value.field == field
