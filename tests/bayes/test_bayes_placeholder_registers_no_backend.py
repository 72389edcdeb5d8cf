"""pipekit-train-bayes is a placeholder until its backend lands.

Runs in `nox -s tests-bayes`, whose venv holds only this distribution and what it declares.
It must install, its module(s) must import, and it must register no `pipekit_train.backends`
entry point — so the registry does not offer a backend that cannot run.
(pipekit-train-bayes is a shared layer and never registers a backend of its own.)
Replace this file with real tests when the code lands.
"""

from __future__ import annotations

import importlib
from importlib import metadata

import pytest

DIST = "pipekit-train-bayes"
MODULES: list[str] = ["pipekit_train.adapters.bayes"]
BACKEND_NAMES: list[str] = []


def test_distribution_is_installed() -> None:
    dist = metadata.distribution(DIST)
    assert dist.version, f"{DIST} has no version"


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str) -> None:
    mod = importlib.import_module(name)
    assert mod.__all__ == []
    assert mod.__doc__ and "not yet available" in mod.__doc__


def test_registers_no_backend_entry_point() -> None:
    eps = metadata.distribution(DIST).entry_points
    assert [ep for ep in eps if ep.group == "pipekit_train.backends"] == []
    for ep in metadata.entry_points(group="pipekit_train.backends"):
        assert not any(ep.value == m or ep.value.startswith(m + ":") for m in MODULES), ep


def test_registry_does_not_list_it() -> None:
    from pipekit_train import registry

    installed = registry.installed_backends()
    assert all(b.distribution != DIST for b in installed), installed
    assert not {b.name for b in installed} & set(BACKEND_NAMES)
