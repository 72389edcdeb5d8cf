"""``docs/architecture.md`` draws core's layers from the import contract ``lint-imports``
checks (``[tool.importlinter]`` ``core-layers`` in the root ``pyproject.toml``): the picture
and the contract name the same layers in the same order, so neither can change alone, and
every module of ``pipekit_train`` is in a layer (the contract is exhaustive)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pipekit_train

ROOT = Path(__file__).resolve().parents[2]
MARK = "<!-- the layers of [tool.importlinter] core-layers, top to bottom -->"


def _contract_layers() -> list[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["id"] == "core-layers"]
    return list(contract["layers"])


def _drawn_layers() -> list[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    block = text.split(MARK, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [line.strip() for line in block.splitlines() if line.strip()]


def test_the_picture_is_the_contract() -> None:
    assert _drawn_layers() == _contract_layers()


def test_every_core_module_is_in_a_layer() -> None:
    named = {m.strip() for layer in _contract_layers() for m in layer.split("|")}
    core = Path(pipekit_train.__file__).parent
    here = {p.stem for p in core.glob("*.py") if p.stem != "__init__"}
    here |= {p.name for p in core.iterdir() if (p / "__init__.py").is_file()}
    assert sorted(here - named - {"adapters"}) == []
    assert sorted(named - here) == []
