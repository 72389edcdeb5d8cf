"""The training-feature fields: validated at construction, in YAML, refused by name.

``accumulate_steps``, ``ema_decay`` and ``precision`` are ``TrainingLoop`` fields
checked without any backend (a ``ConfigError`` naming the field, and the fix),
readable from YAML, and ``pipekit_train.loop.require_features`` — which every
backend calls in ``run()`` — refuses a field set away from its default that the
backend does not list as supported, before anything compiles. The fields away from
their defaults (``non_default_features``) are what the backends add to the resume
guard; at the defaults it is empty, so older fingerprints are unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.loop import (
    FEATURE_DEFAULTS,
    PRECISIONS,
    non_default_features,
    require_features,
)

DATA = {"x": [[0.0]], "y": [0]}


def _loop(**kw: Any) -> TrainingLoop:
    return TrainingLoop(dataset=DATA, loss="cross_entropy", **kw)


@pytest.mark.parametrize(
    ("field", "value", "match"),
    [
        ("accumulate_steps", 0, "positive integer"),
        ("accumulate_steps", 2.0, "positive integer"),
        ("accumulate_steps", True, "positive integer"),
        ("ema_decay", 1.0, "strictly between 0 and 1"),
        ("ema_decay", 0, "strictly between 0 and 1"),
        ("ema_decay", "0.9", "strictly between 0 and 1"),
        ("precision", "bf16", "mixed-bfloat16"),
        ("precision", "float16", "must be one of"),
    ],
)
def test_bad_feature_value_is_config_error_naming_the_field(field, value, match) -> None:
    with pytest.raises(ConfigError, match=match) as err:
        _loop(**{field: value})
    assert err.value.field == field
    assert f"TrainingLoop.{field}" in str(err.value)


def test_defaults_are_off_and_valid_values_construct() -> None:
    loop = _loop()
    assert {name: getattr(loop, name) for name in FEATURE_DEFAULTS} == FEATURE_DEFAULTS
    for precision in PRECISIONS:
        assert _loop(precision=precision).precision == precision
    assert _loop(ema_decay=0.99, accumulate_steps=8).ema_decay == 0.99


def test_feature_fields_read_from_yaml() -> None:
    text = (
        "dataset: {factory: 'json:loads', kwargs: {s: '[1]'}}\nloss: mse\n"
        "accumulate_steps: 4\nema_decay: 0.995\nprecision: bfloat16\n"
    )
    loop = TrainingLoop.from_yaml(text)
    assert (loop.accumulate_steps, loop.ema_decay, loop.precision) == (4, 0.995, "bfloat16")
    assert TrainingLoop.from_yaml(loop.to_yaml()) == loop
    with pytest.raises(ConfigError) as err:
        TrainingLoop.from_yaml(text.replace("bfloat16", "half"))
    assert err.value.field == "precision"


@pytest.mark.parametrize(
    ("field", "value"), [("accumulate_steps", 2), ("ema_decay", 0.9), ("precision", "bfloat16")]
)
def test_require_features_refuses_an_unsupported_field_by_name(field, value) -> None:
    loop = _loop(**{field: value})
    with pytest.raises(
        ConfigError, match=f"TrainingLoop.{field}=.*not supported by the toy"
    ) as err:
        require_features(loop, supported=(), backend="toy")
    assert err.value.field == field
    # Listed as supported, or left at its default, it passes.
    require_features(loop, supported=(field,), backend="toy")
    require_features(_loop(), supported=(), backend="toy")


def test_non_default_features_names_exactly_the_fields_set_away_from_their_defaults() -> None:
    assert non_default_features(_loop()) == {}
    loop = _loop(accumulate_steps=2, precision="mixed-bfloat16")
    assert non_default_features(loop) == {"accumulate_steps": 2, "precision": "mixed-bfloat16"}
    assert non_default_features(_loop(ema_decay=0.9)) == {"ema_decay": 0.9}
