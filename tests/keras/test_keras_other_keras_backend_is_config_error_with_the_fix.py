"""A Keras set up for another backend is refused with the fix, not a raw ImportError."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
from pipekit_train.errors import ConfigError
try:
    import pipekit_train.adapters.keras
except ConfigError as e:
    print("ConfigError:", e)
"""


def test_keras_backend_env_naming_tensorflow_is_config_error(tmp_path: Path) -> None:
    env = dict(os.environ, KERAS_BACKEND="tensorflow", HOME=str(tmp_path), JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ConfigError: KERAS_BACKEND='tensorflow'" in proc.stdout
    assert "KERAS_BACKEND=jax" in proc.stdout


def test_keras_already_imported_on_another_backend_is_config_error(tmp_path: Path) -> None:
    env = dict(os.environ, KERAS_BACKEND="numpy", HOME=str(tmp_path), JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", "import keras\n" + SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "ConfigError: Keras was already imported on the 'numpy' backend" in proc.stdout
    assert "in a fresh process" in proc.stdout
