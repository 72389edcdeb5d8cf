"""``docs/writing-a-backend.md`` lists every check of the contract kit (``pipekit_train.testing
.CHECKS``), each of which is documented by its docstring, so the tutorial a third party follows
cannot fall behind the kit it describes."""

from __future__ import annotations

import re
from pathlib import Path

from pipekit_train.testing import CHECKS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "writing-a-backend.md"


def test_every_check_has_a_docstring_and_a_row_in_the_tutorial() -> None:
    text = PAGE.read_text()
    rows = re.findall(r"^\| `([a-z0-9_]+)` \|", text, flags=re.MULTILINE)
    table = rows[rows.index(next(iter(CHECKS))) :]
    assert table == list(CHECKS), "the table of checks must be CHECKS, in order, and only them"
    undocumented = [name for name, check in CHECKS.items() if len(check.doc) < 80]
    assert not undocumented, undocumented
