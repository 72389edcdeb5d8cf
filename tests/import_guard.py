"""Prove that a subprocess never imported a framework: a ``sitecustomize`` that logs and refuses.

``guarded_env(folder, env)`` returns ``env`` with a ``sitecustomize.py`` (written into
``folder``) first on ``PYTHONPATH``. In the child it puts a finder first on
``sys.meta_path`` that, for any module of :data:`FRAMEWORKS` (or any adapter package that
imports one), appends the name to ``$PIPEKIT_TEST_IMPORT_LOG`` and raises a
``BaseException`` (which no ``except Exception`` or ``except ImportError`` swallows). A
test asserts :func:`imported` is empty: a run that tried even once leaves a line in the
log, so the check cannot pass by accident; its control is a run that must import them.
"""

from __future__ import annotations

import os
from pathlib import Path

FRAMEWORKS = (
    "jax",
    "jaxlib",
    "equinox",
    "optax",
    "orbax",
    "grain",
    "torch",
    "lightning",
    "keras",
    "numpyro",
    "blackjax",
    "sklearn",
    "arviz",
)

_SITE = """
import os
import sys

_LOG = os.environ["PIPEKIT_TEST_IMPORT_LOG"]
_TOP = set(os.environ["PIPEKIT_TEST_FORBIDDEN"].split(","))


def _heavy(name):
    parts = name.split(".")
    if parts[0] in _TOP:
        return True
    if parts[:2] == ["pipekit_train", "jax"]:  # core's [jax] extra
        return True
    # an adapter package (its __init__ imports its framework); light _<name> modules pass
    adapter = parts[:2] == ["pipekit_train", "adapters"] and len(parts) > 2
    return adapter and not parts[2].startswith("_")


class ForbiddenImport(BaseException):
    pass


class _Guard:
    def find_spec(self, name, path=None, target=None):
        if _heavy(name):
            with open(_LOG, "a") as f:
                f.write(name + "\\n")
            raise ForbiddenImport(f"import of {name} during a run that must not import it")
        return None


sys.meta_path.insert(0, _Guard())
"""


def guarded_env(folder: Path, env: dict[str, str]) -> dict[str, str]:
    """``env`` for a child in which importing a framework is logged and refused."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITE)
    log = folder / "imports.log"
    log.unlink(missing_ok=True)
    out = dict(env)
    out["PYTHONPATH"] = os.pathsep.join(p for p in (str(folder), env.get("PYTHONPATH")) if p)
    out["PIPEKIT_TEST_IMPORT_LOG"] = str(log)
    out["PIPEKIT_TEST_FORBIDDEN"] = ",".join(FRAMEWORKS)
    return out


def imported(folder: Path) -> list[str]:
    """The framework modules the guarded child tried to import (empty: none)."""
    log = folder / "imports.log"
    return log.read_text().split() if log.exists() else []
