"""The JAX persistent compilation cache the backend tests pass as
``backend_options["compilation_cache"]`` (shared by ``tests/equinox`` and ``tests/blackjax``).

The backend option moves JAX's cache to the folder it names, so a test that passed a folder of
its own would leave the session's cache (decision 0176) for the rest of its process.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

_DIRS: dict[str, str] = {}


def compilation_cache_dir(name: str) -> str:
    """The cache folder for the ``name`` suite's runs (results never depend on it: a hit
    returns the same executable).

    In order: ``PIPEKIT_<NAME>_CACHE`` (the folder a parent test process handed its
    subprocesses), the session's ``JAX_COMPILATION_CACHE_DIR`` where nox set one (shared by
    its pytest workers, their subprocesses and the sessions after it), else one temporary
    folder per test process, removed at its exit and exported as ``PIPEKIT_<NAME>_CACHE`` so
    the subprocesses its tests start use it too.
    """
    for var in (f"PIPEKIT_{name.upper()}_CACHE", "JAX_COMPILATION_CACHE_DIR"):
        if os.environ.get(var):
            return os.environ[var]
    if name not in _DIRS:
        _DIRS[name] = tempfile.mkdtemp(prefix=f"pipekit-{name}-jax-cache-")
        atexit.register(shutil.rmtree, _DIRS[name], True)
        os.environ[f"PIPEKIT_{name.upper()}_CACHE"] = _DIRS[name]
    return _DIRS[name]
