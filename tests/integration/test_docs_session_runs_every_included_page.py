"""`nox -s docs` runs the code of every Markdown file a docs page pulls in with `--8<--`.

pytest-markdown-docs reads a page as written, so the code of an included file (a package
README shown as a backend's page, or a README section in getting-started) would not run
from the page. The session's list (`noxfile.docs_test_paths()`) must name every included
file, or a folder holding it, and every package README; an included section must exist.
The noxfile is loaded as in test_typecheck_covers_every_member.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from test_typecheck_covers_every_member import ROOT, _noxfile

_INCLUDE = re.compile(r'^--8<-- "([^":]+)(?::([\w-]+))?"\s*$', re.M)


def _includes() -> list[tuple[Path, str, str | None]]:
    found = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        for target, section in _INCLUDE.findall(page.read_text(encoding="utf-8")):
            found.append((page, target, section or None))
    return found


def test_every_included_file_is_tested_by_the_docs_session() -> None:
    tested = [ROOT / p for p in _noxfile().docs_test_paths()]
    includes = _includes()
    assert includes, "no --8<-- includes found: the pattern is out of date"
    for page, target, _ in includes:
        path = ROOT / target
        assert path.is_file(), f"{page.name} includes a missing file {target}"
        assert any(path == t or t in path.parents for t in tested), (page.name, target)
    for readme in (ROOT / "packages").glob("*/README.md"):
        assert readme in tested, readme


def test_every_included_section_exists() -> None:
    for page, target, section in _includes():
        if section is not None:
            text = (ROOT / target).read_text(encoding="utf-8")
            assert f"--8<-- [start:{section}]" in text, (page.name, target, section)
            assert f"--8<-- [end:{section}]" in text, (page.name, target, section)
