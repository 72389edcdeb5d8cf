"""What a `lowest` cell of the nox matrix installs, read from the workspace's own files.

``closure(root, dist, extras)`` walks a distribution's ``[project].dependencies`` (and those of
the extras named) through its workspace siblings: the siblings it needs (each with the extras
asked of it), and every third-party requirement they declare, as written. A `lowest` cell passes
those requirements to ``uv pip install --resolution lowest-direct`` beside the built wheels, so
each declared range resolves to its floor — a wheel's own requirements would count as transitive
and resolve to the newest version instead.

``locked_test_tools(root, exclude)`` pins the test group's own tools (pytest, scikit-learn, …)
to their versions in ``uv.lock``: a cell varies what we declare, not the tools that test it.

Standard library plus ``packaging`` (which nox itself depends on).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name


def workspace_members(root: Path) -> dict[str, dict]:
    """distribution name → its ``[project]`` table, for every folder under ``packages/``."""
    members = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        members[canonicalize_name(project["name"])] = project
    return members


def closure(root: Path, dist: str, extras: tuple[str, ...] = ()) -> tuple[dict, list[str]]:
    """``({member: sorted extras}, [third-party requirement strings])`` needed by ``dist``.

    Members come in the order they are first reached (``dist`` first); requirements keep the
    text their ``pyproject.toml`` gives, deduplicated, in order.
    """
    projects = workspace_members(root)
    members: dict[str, set[str]] = {}
    requirements: list[str] = []
    todo = [(canonicalize_name(dist), set(extras))]
    while todo:
        name, wanted = todo.pop(0)
        seen = name in members
        known = members.setdefault(name, set())
        fresh = wanted - known
        if seen and not fresh:
            continue
        known |= fresh
        project = projects[name]
        declared = [] if seen else list(project.get("dependencies", []))
        for extra in sorted(fresh):
            declared += project.get("optional-dependencies", {})[extra]
        for text in declared:
            req = Requirement(text)
            if req.marker is not None and not req.marker.evaluate({"extra": ""}):
                continue
            req_name = canonicalize_name(req.name)
            if req_name in projects:
                todo.append((req_name, set(req.extras)))
            elif text not in requirements:
                requirements.append(text)
    ordered = {name: sorted(extras_of) for name, extras_of in members.items()}
    return ordered, requirements


def requirement_names(requirements: list[str]) -> list[str]:
    """The distribution names of ``requirements``, canonical, in order, once each."""
    names: list[str] = []
    for text in requirements:
        name = canonicalize_name(Requirement(text).name)
        if name not in names:
            names.append(name)
    return names


def locked_versions(root: Path) -> dict[str, list[str]]:
    """package → the versions ``uv.lock`` holds for it (more than one where Python forks it)."""
    lock = tomllib.loads((root / "uv.lock").read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for package in lock["package"]:
        if "version" in package:
            found.setdefault(canonicalize_name(package["name"]), []).append(package["version"])
    return found


def locked_test_tools(root: Path, exclude: list[str]) -> list[str]:
    """The root ``test`` group's requirements pinned to uv.lock (``name==version``).

    Names that ``exclude`` (a cell's own requirements) also declare are left out, so the
    cell's floor of, say, mlflow-skinny is not overridden by the test group's pin. A package
    the lock holds at more than one version is left to the resolver.
    """
    group = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    tools = group["dependency-groups"]["test"]
    ours = set(requirement_names(exclude))
    locked = locked_versions(root)
    pinned = []
    for text in tools:
        name = canonicalize_name(Requirement(text).name)
        if name in ours:
            continue
        versions = locked.get(name, [])
        pinned.append(f"{name}=={versions[0]}" if len(versions) == 1 else text)
    return pinned
