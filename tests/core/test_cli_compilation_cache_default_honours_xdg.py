"""The CLI's default JAX compilation cache lives under `$XDG_CACHE_HOME` when that is set
(absolute, as the XDG spec asks), else under `~/.cache`."""

from __future__ import annotations

from pathlib import Path

from pipekit_train._compile_cache_default import default_compilation_cache_dir
from pipekit_train.cli import build_parser


def test_xdg_cache_home_is_honoured(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_compilation_cache_dir() == tmp_path / "pipekit-train" / "jax"


def test_home_cache_without_xdg_or_with_a_relative_one(monkeypatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    expected = Path.home() / ".cache" / "pipekit-train" / "jax"
    assert default_compilation_cache_dir() == expected
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")
    assert default_compilation_cache_dir() == expected


def test_the_cache_is_on_by_default_and_can_be_turned_off(monkeypatch) -> None:
    monkeypatch.delenv("PIPEKIT_TRAIN_COMPILATION_CACHE", raising=False)
    args = build_parser().parse_args(["run", "loop.yaml"])
    assert args.compilation_cache is None  # resolved to default_compilation_cache_dir()
    args = build_parser().parse_args(["run", "loop.yaml", "--compilation-cache", "off"])
    assert args.compilation_cache == "off"
