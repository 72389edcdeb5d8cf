"""core[jax] does not depend on equinox: without it, JaxModelOp says what to install."""

from __future__ import annotations


def test_missing_equinox_names_the_install_command(python_without):
    result = python_without(
        """
        from pipekit_train.errors import BackendNotInstalledError
        from pipekit_train.jax.ops import JaxModelOp  # importable: equinox is imported lazily
        for attempt in (lambda: JaxModelOp(object()), lambda: JaxModelOp.load("/nonexistent")):
            try:
                attempt()
            except BackendNotInstalledError as exc:
                assert isinstance(exc, ImportError)
                print("ERR", exc)
        """,
        "equinox",
    )
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("ERR")]
    assert len(lines) == 2
    assert all("pip install pipekit-train-equinox" in line for line in lines)
