"""`pipekit-train backends` reports as installed exactly the registered backends: none in a
core-only install. Run through the real console script and through `python -m pipekit_train.cli`.

The expectation is read from the `pipekit_train.backends` entry points, so the test is
meaningful in the core-only venv (no backend may be printed) and in a full venv.
"""

from __future__ import annotations

import subprocess

import pytest
from _core_helpers import (
    child_env,
    console_script,
    core_is_installed,
    registered_backends,
    run_module_cli,
)


def _printed_backends(stdout: str) -> list[str]:
    """Names of the backends printed as installed (every known one is printed)."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert lines[0].startswith("pipekit-train-core "), stdout
    return sorted(line.split()[0] for line in lines[1:] if line.split()[1] == "installed:")


def _check(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stderr
    expected = registered_backends()
    assert _printed_backends(result.stdout) == expected
    for line in result.stdout.splitlines()[1:]:
        assert "[broken" not in line, line


def test_python_m_cli_backends_prints_the_registered_backends() -> None:
    _check(run_module_cli("backends"))


def test_console_script_backends_prints_the_registered_backends() -> None:
    if not core_is_installed():
        pytest.skip("pipekit-train-core is not installed here (running from a source tree)")
    script = console_script()
    result = subprocess.run(
        [str(script), "backends"], capture_output=True, text=True, env=child_env(), timeout=120
    )
    _check(result)
    # The console script reports the installed distribution's version.
    from importlib import metadata

    assert result.stdout.splitlines()[0] == (
        f"pipekit-train-core {metadata.version('pipekit-train-core')}"
    )


def test_core_only_install_has_no_backend_registered() -> None:
    """In the tests-core session only core is installed: the registry is empty."""
    from importlib import metadata

    backend_dists = [
        d
        for d in ("equinox", "numpyro", "blackjax", "lightning", "keras", "bayes")
        if _installed(metadata, f"pipekit-train-{d}")
    ]
    if backend_dists:
        pytest.skip(f"not a core-only install: {backend_dists} installed")
    assert registered_backends() == []
    out = run_module_cli("backends").stdout
    assert _printed_backends(out) == []
    assert "not installed: pip install pipekit-train-equinox" in out


def _installed(metadata: object, name: str) -> bool:
    try:
        metadata.distribution(name)  # type: ignore[attr-defined]
    except Exception:
        return False
    return True
