"""`nox -s typecheck` checks every package of every distribution, found by itself.

The session's list comes from `noxfile.typed_packages()`, which reads the `src` folders; it
must name exactly the modules that the members build (`[tool.uv.build-backend]
module-name`), so a new backend is type-checked without editing the noxfile. The noxfile is
loaded with a stand-in `nox` module when nox itself is not installed here.
"""

from __future__ import annotations

import importlib.util
import sys
import tomllib
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _stub_nox() -> types.ModuleType:
    def session(*args: Any, **kwargs: Any) -> Any:
        if args and callable(args[0]):
            return args[0]
        return lambda fn: fn

    def parametrize(*args: Any, **kwargs: Any) -> Any:
        return lambda fn: fn

    return types.SimpleNamespace(  # type: ignore[return-value]
        needs_version="",
        options=types.SimpleNamespace(),
        session=session,
        parametrize=parametrize,
        Session=object,
    )


def _noxfile() -> Any:
    saved = sys.modules.get("nox")
    if importlib.util.find_spec("nox") is None:
        sys.modules["nox"] = _stub_nox()
    try:
        spec = importlib.util.spec_from_file_location("_noxfile", ROOT / "noxfile.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        if saved is None:
            sys.modules.pop("nox", None)
        else:
            sys.modules["nox"] = saved


def test_typecheck_packages_are_every_members_modules() -> None:
    noxfile = _noxfile()
    built: dict[str, set[str]] = {}
    for pyproject in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        config = tomllib.loads(pyproject.read_text())
        names = config["tool"]["uv"]["build-backend"]["module-name"]
        built[config["project"]["name"]] = {names} if isinstance(names, str) else set(names)
    found = {dist: set(pkgs) for dist, pkgs in noxfile.typed_packages().items()}
    assert found == built
    assert set(noxfile.DISTRIBUTIONS) == set(built)
