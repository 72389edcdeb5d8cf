"""`pipekit-train backends` lists every backend in `registry.KNOWN_BACKENDS` with its state,
reading only metadata: it imports no array library (what keeps it fast; speed is measured in
benchmarks/, not asserted here).

The expected state of each backend is computed here from `importlib.metadata`, so the test
holds in the core-only venv (all "not installed") and in the full workspace venv (equinox
installed, the placeholders "installed but provides no backend yet").
"""

from __future__ import annotations

import json
from importlib import metadata

from _core_helpers import registered_backends, run_python

from pipekit_train.registry import KNOWN_BACKENDS

CHILD = """
import contextlib, io, json, sys
from pipekit_train.cli import main
buf = io.StringIO()
with contextlib.redirect_stdout(buf):
    rc = main(["backends"])
heavy = sorted(m for m in ("jax", "torch", "keras", "numpyro", "equinox", "optax", "numpy",
                          "pipekit_train.adapters.equinox") if m in sys.modules)
print(json.dumps({"rc": rc, "out": buf.getvalue(), "heavy": heavy}))
"""


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _run() -> dict:
    result = run_python(CHILD)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_backends_imports_no_array_library() -> None:
    # What keeps `backends` fast is that it reads metadata and imports nothing heavy; a wall
    # time would measure this machine and its load, not the code (benchmarks/ measure speed).
    report = _run()
    assert report["rc"] == 0
    assert report["heavy"] == [], f"`backends` imported {report['heavy']}"


def test_every_known_backend_is_listed_with_its_state() -> None:
    lines = {line.split()[0]: line for line in _run()["out"].splitlines()[1:] if line.strip()}
    assert set(KNOWN_BACKENDS) <= set(lines)
    registered = set(registered_backends())
    for name, dist in KNOWN_BACKENDS.items():
        line = lines[name]
        version = _version(dist)
        if name in registered:
            assert f"installed: {dist} {version}" in line, line
        elif version is not None:
            # A placeholder distribution: installed, but it registers no backend yet.
            assert f"{dist} {version} is installed but provides no backend yet" in line, line
            assert "not installed" not in line, line
        else:
            assert line.endswith(f"not installed: pip install {dist}"), line


def test_installed_backend_shows_its_library_versions_from_metadata() -> None:
    if "equinox" not in registered_backends():
        return  # core-only venv: nothing is installed, the state test above covers it
    line = next(ln for ln in _run()["out"].splitlines() if ln.startswith("equinox "))
    for lib in ("equinox", "jax", "optax", "grain", "orbax-checkpoint"):
        assert f"{lib} {metadata.version(lib)}" in line, line
    assert "pyyaml" not in line  # core's own dependencies are not the backend's libraries
