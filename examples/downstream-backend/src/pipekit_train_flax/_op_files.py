"""An NNX module's state as files of data: ``weights.npz`` + the summary in ``op.json``.

Array leaves are written by group and index (``"w00000"``, …) into an ``.npz`` archive
(NumPy's format, read back with ``allow_pickle=False``: nothing on disk is ever
unpickled); RNG keys are stored as their key data. The summary (each leaf's path,
variable type, shape and dtype) goes to ``op.json``; :func:`compare` checks a skeleton
against it before any value is read, so a mismatch names the first differing leaf
instead of failing inside ``nnx.merge``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import nnx

from pipekit_train.errors import CheckpointError

__all__ = [
    "leaf_summary",
    "compare",
    "host_arrays",
    "write_arrays",
    "read_arrays",
    "fill",
    "replace_into",
]


def _is_key(leaf: Any) -> bool:
    return bool(jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key))


def _variable_types(state: Any) -> list[str] | None:
    """The ``nnx.Variable`` class name of each leaf, in leaf order (``None`` if unpaired)."""
    variables = jax.tree_util.tree_leaves(state, is_leaf=lambda x: isinstance(x, nnx.Variable))
    names = [type(v).__name__ for v in variables]
    return names if len(names) == len(jax.tree_util.tree_leaves(state)) else None


def leaf_summary(state: Any) -> list[dict[str, Any]]:
    """``[{"path", "type", "shape", "dtype"}, …]`` of every leaf of ``state``, in order."""
    flat = jax.tree_util.tree_flatten_with_path(state)[0]
    types = _variable_types(state)
    out = []
    for i, (path, leaf) in enumerate(flat):
        out.append(
            {
                "path": jax.tree_util.keystr(path),
                "type": types[i] if types is not None else None,
                "shape": [int(d) for d in np.shape(leaf)],
                "dtype": str(leaf.dtype),
            }
        )
    return out


def _describe(entry: dict[str, Any]) -> str:
    return f"{entry.get('type')} shape {tuple(entry.get('shape', ()))} {entry.get('dtype')}"


def compare(source: Path, saved: list[Any], current: list[Any], what: str) -> None:
    """Raise ``CheckpointError`` naming the first leaf where ``current`` differs from ``saved``."""
    for old, new in zip(saved, current, strict=False):
        if old != new:
            where = old.get("path")
            if old.get("path") != new.get("path"):
                where = f"{old.get('path')} (the skeleton has {new.get('path')} there)"
            raise CheckpointError(
                f"{source}: the module given to load does not match the saved {what}; first "
                f"differing leaf {where}: saved {_describe(old)}, skeleton {_describe(new)}"
            )
    if len(saved) != len(current):
        longer, label = (
            (saved, "the save") if len(saved) > len(current) else (current, "the skeleton")
        )
        extra = longer[min(len(saved), len(current))]
        raise CheckpointError(
            f"{source}: the module given to load does not match the saved {what}: "
            f"{len(saved)} saved leaves, {len(current)} in the skeleton; first differing leaf "
            f"{extra.get('path')} (only in {label})"
        )


def host_arrays(leaves: list[Any]) -> list[np.ndarray]:
    """``leaves`` as NumPy arrays, RNG keys as their key data."""
    return [np.asarray(jax.device_get(jax.random.key_data(x) if _is_key(x) else x)) for x in leaves]


def write_arrays(path: Path, groups: dict[str, list[np.ndarray]]) -> None:
    """Write each group's arrays to the ``.npz`` file ``path`` as ``<group><index>``."""
    arrays = {f"{group}{i:05d}": a for group, items in groups.items() for i, a in enumerate(items)}
    savez: Any = np.savez  # its stub types **kwds as its own keyword options
    with open(path, "wb") as f:
        savez(f, **arrays)


def read_arrays(path: Path, counts: dict[str, int]) -> dict[str, list[np.ndarray]]:
    """The groups :func:`write_arrays` wrote, ``counts[group]`` arrays each (no pickle)."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {
                group: [archive[f"{group}{i:05d}"] for i in range(n)] for group, n in counts.items()
            }
    except (OSError, KeyError, ValueError) as exc:
        raise CheckpointError(f"{path} cannot be read: {type(exc).__name__}: {exc}") from exc


def fill(skeleton: Any, arrays: list[np.ndarray]) -> Any:
    """``skeleton`` with its leaves replaced by ``arrays`` (keys rewrapped in its key type)."""
    leaves, treedef = jax.tree_util.tree_flatten(skeleton)
    out = [
        jax.random.wrap_key_data(jnp.asarray(a), impl=jax.random.key_impl(like))
        if _is_key(like)
        else jnp.asarray(a)
        for like, a in zip(leaves, arrays, strict=True)
    ]
    return jax.tree_util.tree_unflatten(treedef, out)


def replace_into(directory: Path, name: str, write: Any) -> None:
    """Write ``directory/name`` beside its final name, then rename it into place."""
    tmp = directory / f"{name}.tmp"
    write(tmp)
    os.replace(tmp, directory / name)
