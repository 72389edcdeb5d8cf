"""JAX's persistent compilation cache, so a second run skips XLA compilation.

The cache is bounded: JAX's own eviction (``jax_compilation_cache_max_size``)
needs the ``filelock`` package, which the ``[jax]`` extra does not pull in, and it
fails on entries written without eviction. So the bound is enforced here instead:
the oldest entries (by modification time) are deleted until the folder holds at
most ``max_bytes``.

A cache folder is a path the user typed, and it may hold their own files (issue 24:
a pruner that deleted ``train_data_2019.csv``). So pruning deletes only what it can
recognise as its own, in a folder it knows is its own, after the run has succeeded:

- **Its own folder**: the folder holds :data:`MARKER_FILE`, which pipekit writes when
  it creates the folder, or adopts one that is empty or holds nothing but JAX cache
  entries. A folder with anything else in it (and no marker) is used as the cache —
  JAX only adds its entries — but never pruned, with a warning saying why.
- **Its own entries**: only names JAX's cache writes, ``<module>-<sha256 hex>-cache``
  (and the ``-atime`` files of JAX's own eviction); see :data:`ENTRY_RE`.
- **After the run**: :func:`use_compilation_cache` turns the cache on before compiling
  and returns a :class:`CompilationCache`; the backend calls its :meth:`~CompilationCache.prune`
  only when the run has passed validation and finished. A run refused by validation
  deletes nothing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from pipekit_train._warn import warn_user
from pipekit_train.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_BYTES",
    "ENTRY_RE",
    "MARKER_FILE",
    "CompilationCache",
    "enable_compilation_cache",
    "is_cache_entry",
    "prune_cache",
    "use_compilation_cache",
]

#: Default bound of the cache folder: 2 GiB (a digits-MLP run adds ~1 MB).
DEFAULT_MAX_BYTES = 2 * 1024**3

#: Overrides the bound, in bytes (``0`` or less: no bound).
MAX_BYTES_ENV = "PIPEKIT_TRAIN_COMPILATION_CACHE_MAX_BYTES"

#: The file that marks a folder as pipekit's compilation cache (so it may be pruned).
MARKER_FILE = ".pipekit-compilation-cache"

_MARKER_TEXT = (
    "This folder is pipekit-train's JAX compilation cache. pipekit-train prunes it to a size\n"
    "bound, deleting only JAX cache entries (<module>-<sha256>-cache). Delete this file to\n"
    "stop the pruning.\n"
)

#: The names JAX's persistent cache writes (``jax._src.lru_cache``, jax 0.4 - 0.10): the
#: compiled module's name, ``-``, the SHA-256 cache key in hex, then ``-cache`` (the entry)
#: or ``-atime`` (its access time, written only under JAX's own size bound).
ENTRY_RE = re.compile(r"^[\w.\-]+-[0-9a-f]{64}-(cache|atime)$")


def is_cache_entry(path: Path) -> bool:
    """Whether ``path`` is a file named like a JAX persistent-cache entry."""
    return bool(ENTRY_RE.match(path.name)) and path.is_file() and not path.is_symlink()


def _max_bytes_from_env() -> int:
    raw = os.environ.get(MAX_BYTES_ENV, "")
    try:
        return int(raw) if raw else DEFAULT_MAX_BYTES
    except ValueError:
        return DEFAULT_MAX_BYTES


def _is_marked(directory: Path) -> bool:
    return (directory / MARKER_FILE).is_file()


def prune_cache(directory: str | os.PathLike[str], max_bytes: int) -> list[Path]:
    """Delete the oldest JAX cache entries in ``directory`` until it holds at most ``max_bytes``.

    Only a folder marked as pipekit's cache (:data:`MARKER_FILE`) is pruned, and only
    files named like JAX cache entries (:data:`ENTRY_RE`) are counted and deleted;
    anything else is left alone, whatever the bound. Returns the deleted paths.
    ``max_bytes <= 0`` means no bound. Files that vanish meanwhile (another process
    pruning) are skipped.
    """
    folder = Path(directory)
    if max_bytes <= 0 or not _is_marked(folder):
        return []
    entries: list[tuple[float, int, Path]] = []
    for p in folder.iterdir():
        try:
            if not is_cache_entry(p):
                continue
            st = p.stat()
        except OSError:
            continue
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


def _claim(path: Path) -> list[str]:
    """Create or adopt ``path`` as pipekit's cache; the names that prevent it (none: claimed).

    A new folder, an empty one, or one holding only JAX cache entries (an older pipekit's
    cache, from before the marker) gets the marker. Anything else: the folder is not
    pipekit's, and its foreign entries are returned.
    """
    if _is_marked(path):
        return []
    path.mkdir(parents=True, exist_ok=True)
    foreign = sorted(p.name for p in path.iterdir() if not is_cache_entry(p))
    if not foreign:
        (path / MARKER_FILE).write_text(_MARKER_TEXT, encoding="utf-8")
    return foreign


class CompilationCache:
    """The cache a run turned on: its folder, whether pipekit owns it, and its bound.

    ``os.fspath(cache)`` is the folder. :meth:`prune` is called by the backend after a
    successful run; it deletes nothing in a folder that is not pipekit's.
    """

    def __init__(self, path: Path | None, *, owned: bool, max_bytes: int | None = None) -> None:
        self.path = path
        self.owned = owned
        self.max_bytes = max_bytes

    def __fspath__(self) -> str:
        if self.path is None:
            raise TypeError("the compilation cache is off; it has no folder")
        return str(self.path)

    def __repr__(self) -> str:
        return f"CompilationCache({self.path!r}, owned={self.owned})"

    def prune(self) -> list[Path]:
        """Bound the folder (oldest JAX entries first); a no-op when off or not pipekit's."""
        if self.path is None or not self.owned:
            return []
        bound = _max_bytes_from_env() if self.max_bytes is None else self.max_bytes
        return prune_cache(self.path, bound)


def enable_compilation_cache(
    directory: str | os.PathLike[str], max_bytes: int | None = None
) -> CompilationCache:
    """Point JAX's persistent cache at ``directory`` and cache every compiled program.

    Creates the folder if needed and marks it as pipekit's (see the module docstring);
    a folder holding other files is used but not marked, with a warning. Nothing is
    deleted here: the returned :class:`CompilationCache`'s ``prune()`` bounds the
    folder to ``max_bytes`` (default :data:`DEFAULT_MAX_BYTES`, or
    ``$PIPEKIT_TRAIN_COMPILATION_CACHE_MAX_BYTES``) when called. Safe to call more than
    once; the first call wins for the process, as JAX reads the cache directory when it
    first compiles.
    """
    import jax

    path = Path(directory).expanduser()
    foreign = _claim(path)
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        warn_user(
            f"compilation cache {str(path)!r} holds files pipekit-train did not write "
            f"({shown}), so it is used but never pruned (nothing in it is deleted); give a "
            f"new or empty folder to have the cache bounded"
        )
    jax.config.update("jax_compilation_cache_dir", str(path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return CompilationCache(path, owned=not foreign, max_bytes=max_bytes)


def use_compilation_cache(
    folder: Any, field: str = "backend_options.compilation_cache"
) -> CompilationCache:
    """A backend's ``compilation_cache`` option turned on (``None``/``'off'``: left off).

    The one place every JAX backend (equinox, keras, numpyro-svi, numpyro-mcmc,
    blackjax) checks the option and reports an unusable folder as a ``ConfigError``
    naming ``field``. Call the result's ``prune()`` after the run has succeeded.
    """
    if folder in (None, "off"):
        return CompilationCache(None, owned=False)
    if not isinstance(folder, (str, os.PathLike)):
        raise ConfigError(
            f"{field} must be a folder path, 'off' or None, got {folder!r}", field=field
        )
    try:
        return enable_compilation_cache(folder)
    except OSError as exc:
        raise ConfigError(
            f"{field}: cannot use {str(folder)!r} as JAX's compilation cache folder: "
            f"{exc.strerror or exc}; give a writable folder or 'off'",
            field=field,
        ) from exc
