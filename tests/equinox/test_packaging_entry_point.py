"""pipekit-train-equinox registers the `equinox` backend, and the entry point loads."""

from __future__ import annotations

from importlib import metadata


def test_equinox_entry_point_is_registered_and_loads() -> None:
    eps = {
        ep.name: ep
        for ep in metadata.distribution("pipekit-train-equinox").entry_points
        if ep.group == "pipekit_train.backends"
    }
    assert list(eps) == ["equinox"]
    assert eps["equinox"].value == "pipekit_train.adapters.equinox"
    module = eps["equinox"].load()
    assert module.__name__ == "pipekit_train.adapters.equinox"
