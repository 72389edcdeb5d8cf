"""A Keras that fails to import names its real cause: a missing module is a missing module.

A module Keras needs (here ``packaging``, as in a venv resolved at old floors) hidden from a
real fresh interpreter must give ``BackendNotInstalledError`` naming that module — not a
``ConfigError`` blaming ``KERAS_BACKEND``, which is set to ``jax`` and right. A Keras outside
the supported range is refused with the range the installed distribution declares.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# Hide one top-level module from the import system before anything imports it.
HIDE = r"""
import importlib.abc, sys
class _Hide(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == {hidden!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, _Hide())
from pipekit_train.errors import BackendNotInstalledError, ConfigError
try:
    import pipekit_train.adapters.keras
except (BackendNotInstalledError, ConfigError) as e:
    print(type(e).__name__ + ":", e)
"""


def _run(hidden: str, tmp_path: Path) -> str:
    env = dict(os.environ, KERAS_BACKEND="jax", HOME=str(tmp_path), JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", HIDE.format(hidden=hidden)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_missing_dependency_of_keras_is_named_not_blamed_on_keras_backend(
    tmp_path: Path,
) -> None:
    out = _run("packaging", tmp_path)
    assert out.startswith("BackendNotInstalledError:"), out
    assert "'packaging'" in out
    assert "KERAS_BACKEND" not in out


def test_missing_tensorflow_still_points_at_keras_backend(tmp_path: Path) -> None:
    from pipekit_train.adapters.keras._env import _import_failure

    err = _import_failure(ModuleNotFoundError("No module named 'tensorflow'", name="tensorflow"))
    assert type(err).__name__ == "ConfigError"
    assert "KERAS_BACKEND=jax" in str(err)


def test_keras_itself_missing_gives_the_install_command() -> None:
    from pipekit_train.adapters.keras._env import _import_failure

    err = _import_failure(ModuleNotFoundError("No module named 'keras'", name="keras"))
    assert type(err).__name__ == "BackendNotInstalledError"
    assert "pip install pipekit-train-keras" in str(err)


def test_private_api_refusal_names_the_declared_keras_range(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import keras

    from pipekit_train._declared import declared_range
    from pipekit_train.adapters.keras import _private
    from pipekit_train.errors import BackendNotInstalledError

    use = _private.PRIVATE_API[0]
    monkeypatch.setattr(_private, "missing_private_api", lambda k: [f"{use.owner}.{use.name}"])
    with pytest.raises(BackendNotInstalledError) as err:
        _private.check_private_api(keras)
    spec = declared_range("pipekit-train-keras", "keras")
    assert spec is not None and spec.startswith(">=3.") and "<" in spec
    assert f"keras{spec}" in str(err.value)
