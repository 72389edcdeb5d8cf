"""JAX's persistent compilation cache, so a second run skips XLA compilation.

The cache is bounded: JAX's own eviction (``jax_compilation_cache_max_size``)
needs the ``filelock`` package, which the ``[jax]`` extra does not pull in, and it
fails on entries written without eviction. So the bound is enforced here instead,
when the cache is enabled (once per run): the oldest entries (by modification
time) are deleted until the folder holds at most ``max_bytes``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["DEFAULT_MAX_BYTES", "enable_compilation_cache", "prune_cache"]

#: Default bound of the cache folder: 2 GiB (a digits-MLP run adds ~1 MB).
DEFAULT_MAX_BYTES = 2 * 1024**3

#: Overrides the bound, in bytes (``0`` or less: no bound).
MAX_BYTES_ENV = "PIPEKIT_TRAIN_COMPILATION_CACHE_MAX_BYTES"


def _max_bytes_from_env() -> int:
    raw = os.environ.get(MAX_BYTES_ENV, "")
    try:
        return int(raw) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def prune_cache(directory: str | os.PathLike[str], max_bytes: int) -> list[Path]:
    """Delete the oldest files in ``directory`` until it holds at most ``max_bytes``.

    Returns the deleted paths. ``max_bytes <= 0`` means no bound. Files that
    vanish meanwhile (another process pruning) are skipped.
    """
    if max_bytes <= 0:
        return []
    entries: list[tuple[float, int, Path]] = []
    for p in Path(directory).iterdir():
        try:
            st = p.stat()
        except OSError:
            continue
        if p.is_file() and not p.name.startswith("."):
            entries.append((st.st_mtime, st.st_size, p))
    total = sum(size for _, size, _ in entries)
    removed: list[Path] = []
    for _, size, p in sorted(entries, key=lambda e: (e[0], e[2].name)):
        if total <= max_bytes:
            break
        try:
            p.unlink()
        except OSError:
            continue
        total -= size
        removed.append(p)
    return removed


def enable_compilation_cache(
    directory: str | os.PathLike[str], max_bytes: int | None = None
) -> Path:
    """Point JAX's persistent cache at ``directory`` and cache every compiled program.

    The folder is first pruned to ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`,
    or ``$PIPEKIT_TRAIN_COMPILATION_CACHE_MAX_BYTES``), oldest entries first.
    Safe to call more than once; the first call wins for the process, as JAX
    reads the cache directory when it first compiles.
    """
    import jax

    path = Path(directory).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    prune_cache(path, _max_bytes_from_env() if max_bytes is None else max_bytes)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path
