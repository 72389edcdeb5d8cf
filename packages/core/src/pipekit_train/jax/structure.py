"""The model-structure digest of the resume guard, for any pytree of arrays."""

from __future__ import annotations

from typing import Any

from pipekit_train.fingerprint import structure_digest
from pipekit_train.jax._deps import missing_jax_extra

try:
    import jax
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = ["tree_structure_digest", "tree_structure_entries"]


def tree_structure_entries(tree: Any) -> list[tuple[str, tuple[int, ...], str]]:
    """``(key path, shape, dtype)`` of every array leaf of ``tree``, in tree order.

    Non-array leaves and static fields are left out: they carry no trained state,
    and their reprs (functions, memory addresses) are not stable across processes.
    """
    out = []
    for path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        shape, dtype = getattr(leaf, "shape", None), getattr(leaf, "dtype", None)
        if shape is None or dtype is None:
            continue
        out.append((jax.tree_util.keystr(path), tuple(int(d) for d in shape), str(dtype)))
    return out


def tree_structure_digest(tree: Any) -> str:
    """A short digest of ``tree``'s array leaves: key paths, shapes and dtypes (no reprs)."""
    return structure_digest(tree_structure_entries(tree))
