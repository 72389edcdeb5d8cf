"""JAX's persistent compilation cache, so a second run skips XLA compilation."""

from __future__ import annotations

import os
from pathlib import Path


def enable_compilation_cache(directory: str | os.PathLike[str]) -> Path:
    """Point JAX's persistent cache at ``directory`` and cache every compiled program.

    Safe to call more than once; the first call wins for the process, as JAX
    reads the cache directory when it first compiles.
    """
    import jax

    path = Path(directory).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path
