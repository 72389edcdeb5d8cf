"""The persistent compilation cache is bounded: enabling it prunes the folder to the bound,
deleting the oldest entries first, and a real compile then writes into it."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import run_python
from pipekit_train.jax.compile_cache import prune_cache


def _entry(folder: Path, name: str, size: int, mtime: float) -> Path:
    p = folder / name
    p.write_bytes(b"x" * size)
    os.utime(p, (mtime, mtime))
    return p


def test_prune_deletes_oldest_until_within_the_bound(tmp_path: Path) -> None:
    old = _entry(tmp_path, "a-cache", 400, 1_000)
    mid = _entry(tmp_path, "b-cache", 400, 2_000)
    new = _entry(tmp_path, "c-cache", 400, 3_000)
    removed = prune_cache(tmp_path, 900)
    assert removed == [old]
    assert mid.exists() and new.exists()
    assert prune_cache(tmp_path, 900) == []  # already within the bound
    assert prune_cache(tmp_path, 0) == []  # 0: unbounded


def test_enable_prunes_then_real_compiles_land_in_the_folder(tmp_path: Path) -> None:
    _entry(tmp_path, "stale-cache", 10_000, 1_000)
    code = f"""
    import jax, jax.numpy as jnp
    from pathlib import Path
    from pipekit_train.jax.compile_cache import enable_compilation_cache
    enable_compilation_cache({str(tmp_path)!r}, max_bytes=5_000)
    assert not (Path({str(tmp_path)!r}) / "stale-cache").exists()
    jax.jit(lambda x: x * 2 + 1)(jnp.ones(3)).block_until_ready()
    print(sorted(p.name for p in Path({str(tmp_path)!r}).iterdir()))
    """
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    assert "stale-cache" not in result.stdout and "-cache" in result.stdout
