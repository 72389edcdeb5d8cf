"""torch and lightning are installed by the ``tests-lightning`` session only.

Each ``tests-*`` nox session runs ``uv sync --locked --package DIST --group test``
(core-jax adds its extras). ``uv export`` with the same arguments lists exactly
what that sync installs, from ``uv.lock``, without installing anything; torch (a
5 GB CUDA build) must appear for ``pipekit-train-lightning`` and nowhere else.
The distributions are read from ``noxfile.py`` itself, so a new session is covered.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = {"torch", "lightning", "pytorch-lightning"}


def _nox_constant(name: str) -> object:
    """A literal module-level constant of ``noxfile.py`` (read, not imported: nox is absent)."""
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == name:
            return ast.literal_eval(node.value)
    raise AssertionError(f"noxfile.py has no {name}")


def _nox_distributions() -> dict[str, str]:
    value = _nox_constant("DISTRIBUTIONS")
    assert isinstance(value, dict)
    return value


def _installed_by(*args: str) -> set[str]:
    out = subprocess.run(
        ["uv", "export", "--locked", "--no-hashes", "--format", "requirements-txt", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {m.group(1).lower() for m in re.finditer(r"^([A-Za-z0-9._-]+)==", out, re.M)}


@pytest.mark.skipif(shutil.which("uv") is None, reason="needs uv")
def test_only_the_lightning_session_installs_torch_and_lightning() -> None:
    sessions = {
        f"tests-{folder}": ["--package", dist, "--group", "test"]
        for dist, folder in _nox_distributions().items()
    }
    extras = _nox_constant("CORE_JAX_EXTRAS")
    assert isinstance(extras, list)
    sessions["tests-core-jax"] = [
        "--package",
        "pipekit-train-core",
        *[arg for extra in extras for arg in ("--extra", extra)],
        "--group",
        "test",
    ]
    assert "tests-lightning" in sessions
    for name, args in sessions.items():
        heavy = _installed_by(*args) & HEAVY
        if name == "tests-lightning":
            assert {"torch", "lightning"} <= heavy, name
        else:
            assert not heavy, f"{name} would install {sorted(heavy)}"
