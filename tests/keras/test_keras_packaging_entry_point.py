"""pipekit-train-keras registers the `keras` backend, and the entry point loads."""

from __future__ import annotations

from importlib import metadata

from pipekit_train import registry


def test_keras_entry_point_is_registered_and_loads() -> None:
    eps = {
        ep.name: ep
        for ep in metadata.distribution("pipekit-train-keras").entry_points
        if ep.group == "pipekit_train.backends"
    }
    assert list(eps) == ["keras"]
    assert eps["keras"].value == "pipekit_train.adapters.keras"
    module = eps["keras"].load()
    assert callable(module.run)
    assert registry.load_backend("keras") is module
    assert "keras" in {b.name for b in registry.installed_backends()}


def test_keras_distribution_requires_keras_3_and_no_tensorflow() -> None:
    requires = metadata.requires("pipekit-train-keras") or []
    assert any(r.replace(" ", "").startswith("keras>=3") for r in requires), requires
    assert not any("tensorflow" in r.lower() for r in requires), requires
