"""Subprocess helpers for core's tests: run Python or the console script in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pipekit_train.errors

# The folder holding the ``pipekit_train`` package under test: a src/ folder when the
# tests run from a checkout with PYTHONPATH, site-packages in an installed venv.
PACKAGE_ROOT = str(Path(pipekit_train.errors.__file__).resolve().parents[1])
HERE = str(Path(__file__).resolve().parent)


def child_env() -> dict[str, str]:
    """The environment of a child process that imports the same ``pipekit_train``."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, HERE, env.get("PYTHONPATH", "")) if p
    )
    env.pop("PYTHONSTARTUP", None)
    return env


def run_python(code: str, *args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=cwd,
        timeout=120,
    )


def run_module_cli(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m pipekit_train.cli ARGS`` in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", *args],
        capture_output=True,
        text=True,
        env=child_env(),
        cwd=cwd,
        timeout=120,
    )


def core_is_installed() -> bool:
    """Whether pipekit-train-core is installed as a distribution (not only on PYTHONPATH)."""
    try:
        metadata.distribution("pipekit-train-core")
    except metadata.PackageNotFoundError:
        return False
    return True


def console_script() -> Path:
    """The installed ``pipekit-train`` script next to the running interpreter."""
    bindir = Path(sys.executable).parent
    for name in ("pipekit-train", "pipekit-train.exe"):
        if (bindir / name).exists():
            return bindir / name
    raise FileNotFoundError(f"no pipekit-train console script in {bindir}")


def registered_backends() -> list[str]:
    """Names registered in the ``pipekit_train.backends`` entry-point group."""
    return sorted({ep.name for ep in metadata.entry_points(group="pipekit_train.backends")})
