"""Prove the import contracts can fail: one deliberate violation, and ``lint-imports`` must say so.

Copies the installed ``pipekit_train`` package (every distribution's modules, as the lint
session installs them) into a scratch folder, adds one upward import — the engine importing
the command line — and runs ``lint-imports`` on the copy. Exits 0 only if the run fails and
names the broken layer contract and the offending import; run by ``nox -s lint``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pipekit_train

VIOLATION = "\nfrom pipekit_train import cli as _deliberate_violation  # noqa: F401\n"


def main(pyproject: str) -> int:
    installed = Path(next(iter(pipekit_train.__path__)))
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "pipekit_train"
        shutil.copytree(installed, copy, ignore=shutil.ignore_patterns("__pycache__"))
        with (copy / "engine" / "_driver.py").open("a", encoding="utf-8") as f:
            f.write(VIOLATION)
        env = {**os.environ, "PYTHONPATH": tmp}
        proc = subprocess.run(
            [str(Path(sys.executable).with_name("lint-imports")), pyproject, "--no-cache"],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp,
        )
    out = proc.stdout + proc.stderr
    expected = (
        "core's layers: each imports only the layers below it BROKEN",
        "pipekit_train.engine._driver -> pipekit_train.cli",
    )
    missing = [line for line in expected if line not in out]
    if proc.returncode == 0 or missing:
        print(out[-4000:])
        print(f"the deliberate violation was not reported (exit {proc.returncode}): {missing}")
        return 1
    print("lint-imports fails on a deliberate violation, as it must:")
    print("  " + expected[1] + f"  (exit {proc.returncode})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1]))
