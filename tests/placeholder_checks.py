"""Shared checks for a distribution whose backend has not landed yet.

Each placeholder's test file (run in that distribution's own nox session, whose venv holds only
it and what it declares) calls ``define_placeholder_tests`` with its names. The distribution must
install, its module(s) must import, and it must register no ``pipekit_train.backends`` entry
point — so the registry does not offer a backend that cannot run. Replace the calling file with
the backend's real tests when it lands.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pytest


def define_placeholder_tests(
    dist: str, modules: list[str], backend_names: list[str]
) -> dict[str, Callable[..., Any]]:
    """The four placeholder tests for ``dist``, to bind at module level of a test file."""

    def test_distribution_is_installed() -> None:
        assert metadata.distribution(dist).version, f"{dist} has no version"

    @pytest.mark.parametrize("name", modules)
    def test_module_imports(name: str) -> None:
        mod = importlib.import_module(name)
        assert mod.__all__ == []
        assert mod.__doc__ and "not yet available" in mod.__doc__

    def test_registers_no_backend_entry_point() -> None:
        eps = metadata.distribution(dist).entry_points
        assert [ep for ep in eps if ep.group == "pipekit_train.backends"] == []
        for ep in metadata.entry_points(group="pipekit_train.backends"):
            assert not any(ep.value == m or ep.value.startswith(m + ":") for m in modules), ep

    def test_registry_does_not_list_it() -> None:
        from pipekit_train import registry

        installed = registry.installed_backends()
        assert all(b.distribution != dist for b in installed), installed
        assert not {b.name for b in installed} & set(backend_names)

    return {
        f.__name__: f
        for f in (
            test_distribution_is_installed,
            test_module_imports,
            test_registers_no_backend_entry_point,
            test_registry_does_not_list_it,
        )
    }
