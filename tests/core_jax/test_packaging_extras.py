"""The session for core's extras really has them: every requirement they declare is installed.

Runs in `nox -s tests-core-jax` (core with `--extra jax --extra tensorboard --extra mlflow
--extra plot --extra sweep`). The `[mlflow]` extra brings what MLflow's SQLite store needs beyond
mlflow-skinny.
"""

from __future__ import annotations

from importlib import metadata

import pytest
from packaging.requirements import Requirement

EXTRAS = ["jax", "tensorboard", "mlflow", "plot", "sweep"]


def _requirements(extra: str) -> list[Requirement]:
    reqs = [Requirement(r) for r in metadata.requires("pipekit-train-core") or []]
    return [r for r in reqs if r.marker is not None and r.marker.evaluate({"extra": extra})]


@pytest.mark.parametrize("extra", EXTRAS)
def test_extra_is_declared_and_installed(extra: str) -> None:
    assert extra in (metadata.metadata("pipekit-train-core").get_all("Provides-Extra") or [])
    reqs = _requirements(extra)
    assert reqs, f"extra {extra!r} declares nothing"
    for req in reqs:
        version = metadata.version(req.name)
        assert req.specifier.contains(version, prereleases=True), (req, version)


def test_mlflow_extra_covers_the_sqlite_store() -> None:
    names = {r.name.lower() for r in _requirements("mlflow")}
    assert {"mlflow-skinny", "sqlalchemy", "alembic"} <= names
