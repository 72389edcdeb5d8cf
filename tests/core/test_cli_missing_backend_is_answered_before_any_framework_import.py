"""`pipekit-train run` of a YAML naming a backend whose distribution is missing answers with
`BackendNotInstalledError` and the `pip install` line, read from the entry points, before
anything heavy is imported — even the user's factory module, which here imports a module
that does not exist. The child's `sitecustomize` logs and refuses every framework import
(`tests/import_guard.py`). In the core-only session every backend is missing; in a full
venv the installed ones are covered by the equinox suite's CLI tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from _core_helpers import registered_backends
from import_guard import guarded_env, imported

from pipekit_train.registry import KNOWN_BACKENDS

YAML = """\
backend: {backend}
model_op: {{factory: "factories_that_import_a_missing_module:make", kwargs: {{width: 4}}}}
dataset: "factories_that_import_a_missing_module:data"
loss: mse
max_steps: 10
checkpoint_dir: ckpt
"""


@pytest.mark.parametrize("backend", sorted(KNOWN_BACKENDS))
def test_missing_backend_is_named_with_its_pip_line(backend: str, tmp_path: Path) -> None:
    if backend in registered_backends():
        pytest.skip(f"{backend} is installed here (tests/equinox covers an installed one)")
    (tmp_path / "factories_that_import_a_missing_module.py").write_text(
        "import no_such_library_anywhere\n"
    )
    (tmp_path / "loop.yaml").write_text(YAML.format(backend=backend))
    env = guarded_env(tmp_path / "guard", dict(os.environ))
    out = subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "run", "loop.yaml", "--no-progress"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert imported(tmp_path / "guard") == [], out.stderr
    assert out.returncode == 2, out.stdout + out.stderr
    assert "BackendNotInstalledError" in out.stderr
    assert f"pip install {KNOWN_BACKENDS[backend]}" in out.stderr
