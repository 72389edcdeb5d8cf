"""Shared helpers for the tests of core's ``[jax]`` extra."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import pipekit_train.errors

# The directory that holds the ``pipekit_train`` package under test (a src/ folder in
# an editable checkout, site-packages in a wheel install).
_PACKAGE_ROOT = str(Path(pipekit_train.errors.__file__).resolve().parents[1])


def run_python(code: str, *, blocked: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter where importing any of ``blocked`` fails.

    ``sys.modules[name] = None`` makes ``import name`` raise ImportError, so the
    code proves it never imports those modules.
    """
    prelude = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in blocked)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, env.get("PYTHONPATH", "")) if p)
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def python_without():
    """``python_without(code, *modules)`` → CompletedProcess; asserts nothing itself."""

    def run(code: str, *modules: str) -> subprocess.CompletedProcess[str]:
        return run_python(code, blocked=modules)

    return run
