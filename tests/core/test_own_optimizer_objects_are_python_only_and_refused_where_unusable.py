"""The user's own optimiser objects: accepted by the loop, Python only, refused where unusable.

Pure Python (no JAX): an object with callable ``init`` and ``update`` (the shape of
``optax.GradientTransformation``) is a valid ``optimizer_config`` at construction;
``to_yaml()`` names ``optimizer_config``; a backend that maps the dict vocabulary
(Lightning, Keras) gets a ``ConfigError`` naming ``optimizer_config`` from
``parse_optimizer_config``, and one that cannot take a schedule callable as ``lr``
a ``ConfigError`` naming ``optimizer_config.lr``. The resume guard records a
schedule callable by its values at fixed steps.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pytest

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.optimizers import (
    SCHEDULE_PROBE_STEPS,
    parse_optimizer_config,
    require_supported,
    schedule_identity,
)


class FakeTransformation(NamedTuple):
    init: Any
    update: Any


TX = FakeTransformation(init=lambda params: (), update=lambda g, s, p=None: (g, s))


def _loop(**kw: Any) -> TrainingLoop:
    return TrainingLoop(model_op=None, dataset={"x": [[0.0]], "y": [0]}, loss="mse", **kw)


def test_loop_accepts_the_object_and_to_yaml_names_the_field() -> None:
    loop = _loop(optimizer_config=TX)
    assert loop.optimizer_config is TX  # kept as given, not copied into a dict
    with pytest.raises(ConfigError, match="exists only in Python") as info:
        loop.to_yaml()
    assert info.value.field == "optimizer_config"


def test_dict_vocabulary_backends_refuse_the_object_by_name() -> None:
    with pytest.raises(ConfigError, match="only the equinox and numpyro-svi") as info:
        parse_optimizer_config(TX)  # type: ignore[arg-type]
    assert info.value.field == "optimizer_config"


def test_schedule_callable_is_refused_where_it_cannot_be_used() -> None:
    spec = parse_optimizer_config({"name": "adam", "lr": lambda step: 0.1 / (1 + step)})
    with pytest.raises(ConfigError, match="cannot use one") as info:
        require_supported(spec, {"adam"}, backend="keras")
    assert info.value.field == "optimizer_config.lr"
    require_supported(spec, {"adam"}, backend="optax (JAX)", callable_lr=True)


def test_schedule_callable_is_recorded_by_its_values() -> None:
    identity = schedule_identity(lambda step: 0.5**step)
    assert identity["schedule"] == "callable"
    assert list(identity["values"]) == [str(s) for s in SCHEDULE_PROBE_STEPS]
    assert identity["values"]["1"] == "0.5"
    assert schedule_identity(lambda: 1.0)["values"] is None  # cannot take a step: unverifiable
