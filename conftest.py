"""Root conftest: the setting for the Python blocks of README.md and docs/ run as tests.

``nox -s docs`` runs ``pytest --markdown-docs README.md docs`` (pytest-markdown-docs):
each ```python block of those files is a test. Here each block runs in its own
temporary working directory, so the files the examples write (``runs/…``) land
there. Items of every other test are left alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _markdown_block_in_tmp_dir(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    if type(request.node).__name__ != "MarkdownInlinePythonItem":
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path_factory.mktemp("docs-block"))
        mp.setenv("JAX_PLATFORMS", "cpu")
        yield


def pytest_ignore_collect(collection_path: Path) -> bool | None:
    """``site/`` (a built site) is never collected."""
    return True if collection_path.name == "site" else None
