"""``docs/options.md`` is written from the backends' option specs: the checked-in page must be
what ``scripts/write_options_reference.py`` writes now, and list every declared option."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location(
        "write_options_reference", ROOT / "scripts" / "write_options_reference.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_checked_in_page_is_not_stale() -> None:
    script = _script()
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    assert page == script.render(), (
        "docs/options.md is stale: run python scripts/write_options_reference.py"
    )
    assert script.main(["--check"]) == 0


def test_every_declared_option_is_on_the_page() -> None:
    script = _script()
    page = (ROOT / "docs" / "options.md").read_text(encoding="utf-8")
    for backend, specs, _ in script._sections():
        assert f"## `{backend}`" in page
        for spec in specs:
            assert f"| `{spec.name}`" in page, (backend, spec.name)
            for alias in spec.aliases:
                assert f"`{alias}`" in page, (backend, alias)
