"""The namespace layout that lets several distributions share ``pipekit_train.adapters``.

In the integration session every member is installed editable, each from its own ``src``
folder; these tests check the rules that make that work (DESIGN §2, "Packaging mechanics") and
that the namespace really spans the folders.
"""

from __future__ import annotations

import ast
import importlib
import tomllib
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ROOT / "packages"
EXTEND_PATH = '__path__ = __import__("pkgutil").extend_path(__path__, __name__)'


def _pyproject(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        return tomllib.load(f)


MEMBERS = {
    _pyproject(p)["project"]["name"]: p.parent for p in sorted(PACKAGES.glob("*/pyproject.toml"))
}


def _modules(name: str) -> list[str]:
    module_name = _pyproject(MEMBERS[name] / "pyproject.toml")["tool"]["uv"]["build-backend"][
        "module-name"
    ]
    return [module_name] if isinstance(module_name, str) else list(module_name)


@pytest.mark.parametrize(
    "relpath", ["pipekit_train/__init__.py", "pipekit_train/adapters/__init__.py"]
)
def test_core_namespace_inits_start_with_extend_path(relpath: str) -> None:
    source = (PACKAGES / "core" / "src" / relpath).read_text()
    body = ast.parse(source).body
    # A module docstring may come first; the first real statement must be the extend_path line.
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    assert body, f"{relpath} is empty"
    assert ast.unparse(body[0]) == ast.unparse(ast.parse(EXTEND_PATH).body[0]), (
        f"{relpath} must begin with: {EXTEND_PATH}"
    )


@pytest.mark.parametrize("name", sorted(n for n in MEMBERS if n != "pipekit-train-core"))
def test_backend_ships_no_init_above_its_own_folder(name: str) -> None:
    src = MEMBERS[name] / "src"
    for above in ["pipekit_train/__init__.py", "pipekit_train/adapters/__init__.py"]:
        assert not (src / above).exists(), f"{name} must not ship {above}"


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_every_module_ships_py_typed(name: str) -> None:
    for module in _modules(name):
        folder = MEMBERS[name] / "src" / module.replace(".", "/")
        assert (folder / "py.typed").is_file(), f"{name}: {module} has no py.typed"


def test_root_sources_name_every_member() -> None:
    root = _pyproject(ROOT / "pyproject.toml")
    assert "project" not in root, "the workspace root must stay virtual"
    sources = root["tool"]["uv"]["sources"]
    assert {n: s for n, s in sources.items() if n.startswith("pipekit-train-")} == {
        n: {"workspace": True} for n in MEMBERS
    }


@pytest.mark.parametrize("name", sorted(MEMBERS))
def test_every_module_imports_together(name: str) -> None:
    """All members installed at once: each module imports, from its own member's src folder."""
    for module in _modules(name):
        mod = importlib.import_module(module)
        where = Path(mod.__file__ or next(iter(mod.__path__))).resolve()
        # Editable installs resolve into the member's src folder; a wheel install into
        # site-packages is fine too (then only the import itself is checked).
        if PACKAGES in where.parents:
            assert MEMBERS[name] in where.parents, f"{module} imported from {where}"


def test_adapters_namespace_spans_the_members() -> None:
    import pipekit_train.adapters

    paths = [Path(p).resolve() for p in pipekit_train.adapters.__path__]
    editable = [p for p in paths if PACKAGES in p.parents]
    if editable:  # editable workspace install: one adapters folder per member that has one
        owners = {p.relative_to(PACKAGES).parts[0] for p in editable}
        assert owners == {p.name for p in MEMBERS.values()}, paths


def test_backend_entry_points_belong_to_members() -> None:
    for ep in metadata.entry_points(group="pipekit_train.backends"):
        module = ep.value.split(":")[0]
        assert module.startswith("pipekit_train.adapters."), ep
        importlib.import_module(module)
