"""The persistent compilation cache is bounded: a folder pipekit created is pruned to the
bound, deleting the oldest JAX entries first, and a real compile writes into it."""

from __future__ import annotations

import os
from pathlib import Path

from conftest import run_python
from pipekit_train.jax.compile_cache import MARKER_FILE, prune_cache


def _entry(folder: Path, module: str, size: int, mtime: float) -> Path:
    p = folder / f"{module}-{'ab' * 32}-cache"  # JAX's naming: <module>-<sha256 hex>-cache
    p.write_bytes(b"x" * size)
    os.utime(p, (mtime, mtime))
    return p


def test_prune_deletes_oldest_until_within_the_bound(tmp_path: Path) -> None:
    (tmp_path / MARKER_FILE).write_text("pipekit's")
    old = _entry(tmp_path, "jit_a", 400, 1_000)
    mid = _entry(tmp_path, "jit_b", 400, 2_000)
    new = _entry(tmp_path, "jit_c", 400, 3_000)
    removed = prune_cache(tmp_path, 900)
    assert removed == [old]
    assert mid.exists() and new.exists()
    assert prune_cache(tmp_path, 900) == []  # already within the bound
    assert prune_cache(tmp_path, 0) == []  # 0: unbounded


def test_a_created_cache_is_pruned_after_real_compiles_land_in_it(tmp_path: Path) -> None:
    folder = tmp_path / "new-cache"  # pipekit creates it, so it is pipekit's
    code = f"""
    import os
    import jax, jax.numpy as jnp
    from pathlib import Path
    from pipekit_train.jax.compile_cache import enable_compilation_cache
    cache = enable_compilation_cache({str(folder)!r}, max_bytes=5_000)
    stale = Path(cache) / ("jit_stale-" + "cd" * 32 + "-cache")
    stale.write_bytes(b"x" * 10_000)
    os.utime(stale, (1_000, 1_000))
    jax.jit(lambda x: x * 2 + 1)(jnp.ones(3)).block_until_ready()
    assert stale.exists()  # nothing is deleted until the run calls prune()
    print([p.name for p in cache.prune()])
    print(sorted(p.name for p in Path(cache).iterdir()))
    """
    result = run_python(code)
    assert result.returncode == 0, result.stderr
    pruned, left = result.stdout.strip().splitlines()[-2:]
    assert "jit_stale" in pruned and "jit_stale" not in left
    assert "-cache" in left and MARKER_FILE in left
