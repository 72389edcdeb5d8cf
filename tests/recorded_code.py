"""Helpers for the tests that a load never runs code named in a saved folder.

``marker_module`` writes a tiny module into a temporary folder (put on ``sys.path``) whose
*import* creates a marker file, so a test can prove that a recorded import string was not
imported; ``os:system`` with a ``touch`` command proves the same for a recorded call.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

MODULE_SOURCE = """\
from pathlib import Path

Path({marker!r}).write_text("imported")


def make(**kwargs):
    Path({marker!r}).write_text("called")
"""


def marker_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> Path:
    """Write module ``name`` (importing it creates the returned marker path) onto sys.path."""
    folder = tmp_path / "evil_code"
    folder.mkdir(exist_ok=True)
    marker = tmp_path / f"{name}.imported"
    (folder / f"{name}.py").write_text(MODULE_SOURCE.format(marker=str(marker)))
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return marker


def edit_op_json(folder: Path, **fields: Any) -> None:
    """Overwrite ``fields`` in ``folder/op.json``, as someone handing over the folder could."""
    meta_path = folder / "op.json"
    meta = json.loads(meta_path.read_text())
    meta.update(fields)
    meta_path.write_text(json.dumps(meta))
