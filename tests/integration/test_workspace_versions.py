"""Each distribution is versioned on its own, and the version ranges between them hold.

Reads the ``pyproject.toml`` files directly (uv does not enforce ranges between workspace
members; ``uv pip check`` in the integration session does, and these tests keep the declared
ranges in the house style: ``>=X.Y,<X.(Y+1)``).
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = sorted(p.parent for p in (ROOT / "packages").glob("*/pyproject.toml"))
CORE = "pipekit-train-core"

# "pipekit-train-core[jax]>=0.1,<0.2" → name, extras, lower (major, minor), upper (major, minor)
RANGE_RE = re.compile(
    r"^(?P<name>pipekit-train-[a-z]+)(?:\[[a-z0-9,\s-]+\])?"
    r">=(?P<lo_major>\d+)\.(?P<lo_minor>\d+),<(?P<hi_major>\d+)\.(?P<hi_minor>\d+)$"
)


def _project(path: Path) -> dict[str, Any]:
    with open(path / "pyproject.toml", "rb") as f:
        project: dict[str, Any] = tomllib.load(f)["project"]
    return project


PROJECTS = {_project(p)["name"]: (p, _project(p)) for p in PACKAGES}
BACKENDS = sorted(name for name in PROJECTS if name != CORE)


def _version_tuple(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


def _workspace_deps(project: dict[str, Any]) -> list[str]:
    deps: list[str] = project.get("dependencies", [])
    return [d.replace(" ", "") for d in deps if d.startswith("pipekit-train-")]


def test_all_seven_distributions_are_members() -> None:
    assert sorted(PROJECTS) == sorted(
        [
            CORE,
            "pipekit-train-equinox",
            "pipekit-train-bayes",
            "pipekit-train-numpyro",
            "pipekit-train-blackjax",
            "pipekit-train-lightning",
            "pipekit-train-keras",
        ]
    )


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_has_static_version_and_changelog_entry(name: str) -> None:
    path, project = PROJECTS[name]
    version = project.get("version")
    assert version, f"{name}: no static [project] version"
    assert "version" not in project.get("dynamic", [])
    assert re.fullmatch(r"\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?", version), version
    changelog = path / "CHANGELOG.md"
    assert changelog.is_file(), f"{name}: no CHANGELOG.md"
    headings = [line for line in changelog.read_text().splitlines() if line.startswith("## ")]
    assert any(re.match(rf"## \[?{re.escape(version)}\]?(\s|$)", h) for h in headings), (
        f"{name}: CHANGELOG.md has no '## {version}' entry (headings: {headings})"
    )


@pytest.mark.parametrize("name", sorted(PROJECTS))
def test_installed_version_matches_pyproject(name: str) -> None:
    _, project = PROJECTS[name]
    assert metadata.version(name) == project["version"], (
        f"{name}: installed {metadata.version(name)}, pyproject says {project['version']} "
        "(stale install? run `uv sync`)"
    )


@pytest.mark.parametrize("name", BACKENDS)
def test_backend_depends_on_core_with_a_minor_range(name: str) -> None:
    """Every backend reaches core through `>=X.Y,<X.(Y+1)` ranges that admit core's version."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for dep in _workspace_deps(PROJECTS[current][1]):
            m = RANGE_RE.match(dep)
            assert m, f"{current}: workspace dependency {dep!r} is not of the form >=X.Y,<X.(Y+1)"
            lo = int(m["lo_major"]), int(m["lo_minor"])
            hi = int(m["hi_major"]), int(m["hi_minor"])
            assert hi == (lo[0], lo[1] + 1), f"{current}: {dep!r} must span exactly one minor"
            target = m["name"]
            assert target in PROJECTS, f"{current}: {dep!r} names no workspace distribution"
            target_version = _version_tuple(PROJECTS[target][1]["version"])
            assert target_version == lo, (
                f"{current}: {dep!r} does not admit {target} "
                f"{PROJECTS[target][1]['version']}; bump the range (docs/releasing.md)"
            )
            if target not in seen:
                seen.add(target)
                todo.append(target)
    assert CORE in seen, f"{name} does not depend on {CORE}, directly or through another member"


def test_core_has_no_workspace_dependencies() -> None:
    assert _workspace_deps(PROJECTS[CORE][1]) == []
