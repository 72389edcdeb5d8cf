"""The nox matrix's `lowest` cells test the floors we declare, and its table cannot go stale.

``scripts/nox_matrix.closure`` must hand every third-party range of a distribution's closure
(its own, its workspace siblings', the extras it names) to ``uv pip install --resolution
lowest-direct`` as a direct requirement: uv counts a wheel's own requirements as transitive and
would resolve them to the newest release. ``scripts/compatibility.py check`` must fail when
docs/compatibility.md disagrees with what a cell installed, and pass on the committed table.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import compatibility  # noqa: E402
import nox_matrix  # noqa: E402


def _declared(folder: str, extra: str | None = None) -> list[str]:
    project = tomllib.loads((ROOT / "packages" / folder / "pyproject.toml").read_text())["project"]
    if extra:
        return list(project["optional-dependencies"][extra])
    return [r for r in project["dependencies"] if not r.startswith("pipekit-train-")]


def test_the_closure_carries_every_range_of_the_distribution_and_its_siblings() -> None:
    members, requirements = nox_matrix.closure(ROOT, "pipekit-train-blackjax")
    assert members == {
        "pipekit-train-blackjax": [],
        "pipekit-train-bayes": [],
        "pipekit-train-core": ["jax"],
    }
    expected = (
        _declared("blackjax") + _declared("bayes") + _declared("core") + _declared("core", "jax")
    )
    assert set(expected) <= set(requirements)
    assert not [r for r in requirements if r.startswith("pipekit-train-")]


def test_core_extras_are_followed_once_each() -> None:
    members, requirements = nox_matrix.closure(ROOT, "pipekit-train-core", ("jax", "mlflow"))
    assert members == {"pipekit-train-core": ["jax", "mlflow"]}
    assert len(requirements) == len(set(requirements))
    assert set(_declared("core", "mlflow")) <= set(requirements)


def test_test_tools_are_pinned_to_the_lock_but_never_override_a_declared_floor() -> None:
    requirements = nox_matrix.closure(ROOT, "pipekit-train-core", ("mlflow",))[1]
    tools = nox_matrix.locked_test_tools(ROOT, exclude=requirements)
    assert any(t.startswith("pytest==") for t in tools)
    assert not any(t.startswith("mlflow-skinny") for t in tools)  # the cell's floor decides


def _record(session: str, resolution: str) -> dict:
    table = compatibility.parse(compatibility.DOC.read_text())[session]
    column = f"{resolution} · Python 3.11"
    return {
        "session": session,
        "resolution": resolution,
        "python": "3.11",
        "versions": {name: cols[column] for name, cols in table["rows"].items()},
        "declared": dict(table["declared"]),
    }


@pytest.mark.parametrize("resolution", ["locked", "lowest"])
def test_the_committed_table_matches_its_own_columns(resolution: str) -> None:
    for session in ["tests-equinox", "tests-keras", "tests-blackjax"]:
        assert compatibility.check(_record(session, resolution)) == 0


def test_a_stale_table_fails_the_check(capsys: pytest.CaptureFixture[str]) -> None:
    rec = _record("tests-equinox", "lowest")
    rec["versions"]["jax"] = "0.0.1"
    assert compatibility.check(rec) == 1
    assert "jax: installed 0.0.1" in capsys.readouterr().err
    rec = _record("tests-equinox", "lowest")
    rec["session"] = "tests-no-such-dist"
    assert compatibility.check(rec) == 1  # a session with no table is stale too
    rec = _record("tests-equinox", "lowest")
    rec["declared"]["jax"] = ">=0.1"
    assert compatibility.check(rec) == 1


def test_a_python_the_table_has_not_seen_is_said_and_passes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rec = _record("tests-equinox", "lowest")
    rec["python"] = "3.13"
    rec["versions"]["jax"] = "0.0.1"  # not compared: the table has no Python 3.13 column
    assert compatibility.check(rec) == 0
    assert "no 'lowest · Python 3.13' column" in capsys.readouterr().out


def test_declared_ranges_are_read_by_whole_name() -> None:
    reqs = ["numpyro>=0.22,<0.23", "numpy>=2.0", "tensorboardX>=2.6"]
    assert compatibility._declared("numpy", reqs) == ">=2.0"
    assert compatibility._declared("tensorboardx", reqs) == ">=2.6"
    assert json.dumps(compatibility._declared("jax", reqs)) == '"any"'
