"""The optional libraries the TensorBoard and MLflow writers need, checked without importing.

One place for the check and its message, used twice: by ``resolve_writers`` when a run's
writers are built (before the backend compiles anything, so a missing extra costs no
compile time) and by each writer when it opens (for a writer used on its own). The check
is ``importlib.util.find_spec``: it imports nothing, so ``import pipekit_train`` and
building writers stay free of tensorboardX and mlflow.
"""

from __future__ import annotations

import importlib.util
from urllib.parse import urlparse

from ..errors import ConfigError

__all__ = [
    "database_libraries_missing",
    "missing_database_libraries",
    "missing_library",
    "require_libraries",
    "tracking_scheme",
]

# writer kind → (module it imports, core extra that installs it)
_NEEDS = {"tensorboard": ("tensorboardX", "tensorboard"), "mlflow": ("mlflow", "mlflow")}
_DATABASE_SCHEMES = ("sqlite", "postgresql", "mysql", "mssql")


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent that fails to import, or a None entry
        return False


def missing_library(kind: str, field: str = "metric_writer") -> ConfigError:
    """The error for a writer of ``kind`` whose library is not installed, with the pip line."""
    module, extra = _NEEDS[kind]
    return ConfigError(
        f"{field}: writer kind {kind!r} needs {module}, which is not installed: "
        f"pip install 'pipekit-train-core[{extra}]'",
        field=field,
    )


def tracking_scheme(uri: str) -> str:
    """The scheme of an MLflow tracking URI, ``""`` for a plain path (even ``C:\\…``)."""
    scheme = urlparse(uri).scheme
    return "" if len(scheme) == 1 else scheme  # a Windows drive letter is a path


def database_libraries_missing(tracking_uri: str) -> bool:
    """Whether ``tracking_uri`` is a database store and sqlalchemy or alembic is missing."""
    scheme = tracking_scheme(tracking_uri).split("+")[0]
    return scheme in _DATABASE_SCHEMES and not (_installed("sqlalchemy") and _installed("alembic"))


def missing_database_libraries(tracking_uri: str, field: str = "metric_writer") -> ConfigError:
    """The error for a database tracking URI without sqlalchemy and alembic."""
    return ConfigError(
        f"{field}: MLflow tracking URI {tracking_uri!r} is a database store, which needs "
        "sqlalchemy and alembic: pip install 'pipekit-train-core[mlflow]' (it brings both), "
        "or use a file store ('file:./mlruns')",
        field=field,
    )


def require_libraries(kind: str, location: str | None, field: str = "metric_writer") -> None:
    """Raise ``ConfigError`` with the ``pip install`` line if a writer of ``kind`` cannot open.

    ``location`` is the MLflow tracking URI (a database store also needs sqlalchemy and
    alembic); other kinds ignore it. JSON lines and CSV need nothing.
    """
    if kind not in _NEEDS:
        return
    if not _installed(_NEEDS[kind][0]):
        raise missing_library(kind, field)
    if kind == "mlflow" and location is not None and database_libraries_missing(location):
        raise missing_database_libraries(location, field)
