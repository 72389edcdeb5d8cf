"""The backend registry reads the ``pipekit_train.backends`` entry points once and keeps
them while ``sys.path`` and its folders are unchanged (a run asks several times, and each
read parses every installed distribution's metadata); a distribution put on the path, or
one written into a folder already on it, is seen by the next question."""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import pytest

from pipekit_train import registry


def _dist(folder: Path, name: str, backend: str) -> None:
    info = folder / f"{name}-0.0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.0.0\n")
    (info / "entry_points.txt").write_text(
        f"[pipekit_train.backends]\n{backend} = pipekit_train_toy_{backend.replace('-', '_')}\n"
    )


def test_a_second_question_reads_no_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.known_backend_names()
    reads = []
    real = metadata.entry_points

    def counting(**kw: object) -> object:
        reads.append(kw)
        return real(**kw)

    monkeypatch.setattr(metadata, "entry_points", counting)
    registry.known_backend_names()
    registry.installed_backends()
    assert reads == []


def test_a_distribution_put_on_the_path_or_written_into_it_is_seen(tmp_path: Path) -> None:
    assert "toy-one" not in registry.known_backend_names()
    _dist(tmp_path, "toy_one", "toy-one")
    sys.path.insert(0, str(tmp_path))
    try:
        assert "toy-one" in registry.known_backend_names()
        _dist(tmp_path, "toy_two", "toy-two")  # a new dist-info in a folder on the path
        names = registry.known_backend_names()
        assert "toy-one" in names and "toy-two" in names
        assert registry.backend_module_name("toy-two") == "pipekit_train_toy_toy_two"
    finally:
        sys.path.remove(str(tmp_path))
    assert "toy-one" not in registry.known_backend_names()
