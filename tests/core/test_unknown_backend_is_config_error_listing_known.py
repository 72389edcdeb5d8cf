"""An unknown backend name is a ConfigError (a ValueError) that lists the known names."""

from __future__ import annotations

import pytest

from pipekit_train import ConfigError, TrainingLoop
from pipekit_train.registry import KNOWN_BACKENDS, known_backend_names, load_backend

DATA = {"x": [0.0, 1.0], "y": [0.0, 1.0]}


def test_unknown_backend_in_python_lists_every_known_backend() -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop(dataset=DATA, loss="mse", backend="tensorflow")
    exc = info.value
    assert isinstance(exc, ValueError)
    assert exc.field == "backend"
    message = str(exc)
    assert "'tensorflow'" in message
    for name in KNOWN_BACKENDS:
        assert name in message


def test_misspelt_backend_suggests_the_closest_name() -> None:
    with pytest.raises(ConfigError, match=r"did you mean 'numpyro-svi'\?"):
        TrainingLoop(dataset=DATA, loss="mse", backend="numpyro_svi")


def test_unknown_backend_from_yaml_is_the_same_error() -> None:
    text = "dataset: '_core_factories:make_dataset'\nloss: mse\nbackend: jaxx\n"
    with pytest.raises(ConfigError) as info:
        TrainingLoop.from_yaml(text)
    assert info.value.field == "backend"
    assert "equinox" in str(info.value)


def test_load_backend_rejects_unknown_name_before_looking_for_a_distribution() -> None:
    with pytest.raises(ConfigError) as info:
        load_backend("sklearn")
    assert "known backends: " + ", ".join(known_backend_names()) in str(info.value)


@pytest.mark.parametrize("bad", [None, 3, ""])
def test_non_string_or_empty_backend_is_config_error(bad: object) -> None:
    with pytest.raises(ConfigError) as info:
        TrainingLoop(dataset=DATA, loss="mse", backend=bad)  # type: ignore[arg-type]
    assert info.value.field == "backend"
