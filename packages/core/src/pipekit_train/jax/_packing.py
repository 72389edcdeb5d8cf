"""Small leaves of a checkpointed state packed into one host buffer per dtype.

Orbax's cost per saved array is fixed (its metadata, a tensorstore write, a thread
hand-off: about 1 ms of CPU per leaf here, on top of ~20 ms per commit), while a
model's state is mostly small leaves: the digits MLP with AdamW is 20 leaves of
at most 256 KiB. Writing them as one array per dtype cut the CPU time of a save
from ~45 ms to ~20 ms (``benchmarks/``, case 5), and on a 2-core machine that CPU
time is taken from the training step, asynchronous save or not.

The packing is described by a JSON *layout* (stored in the checkpoint's meta, in
the same commit): one entry per leaf of the state, in ``tree_flatten`` order,
with its key path, dtype, shape, and where its values are, either a slice of a
packed buffer or an array item of its own. A leaf stays its own item when it is
large (sharded saves of big leaves stay parallel and need no host copy) or is not
fully addressable from this process (multi-process runs pack nothing). A PRNG key
is packed as its raw key data (``uint32``), its entry naming the key's
implementation (``key_impl``) and the data's shape (``data_shape``), so that a
restore wraps it back into the same key: as an item of its own, a key is a jax
array Orbax writes with its sharding metadata, which took a bare Orbax save of a 1 MB
state from 21 to 31 ms of CPU here (decision 0209). The restore side reads the layout,
never the run's sharding, so a checkpoint restores onto any sharding and any process
count.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jax
import numpy as np

__all__ = [
    "PACK_MAX_BYTES",
    "is_key",
    "item_template",
    "layout_shapes",
    "leaf_names",
    "pack",
    "path_name",
    "positional",
    "unpack",
    "unpack_by_path",
]

#: Leaves of at most this many bytes are packed.
PACK_MAX_BYTES = 1 << 20

_PACKED = "packed__"
_LEAF = "leaf__"


def path_name(path: tuple[Any, ...]) -> str:
    """A leaf's key path as Orbax names it: the keys joined by dots (``params.w``, ``opt.0``)."""
    parts = []
    for k in path:
        for attr in ("key", "idx", "name"):
            if hasattr(k, attr):
                parts.append(str(getattr(k, attr)))
                break
        else:
            parts.append(str(k))
    return ".".join(parts)


def leaf_names(tree: Any) -> list[str]:
    """Every leaf's name in ``tree_flatten`` order: its dotted key path (``model.layers.0.weight``),
    or, if two leaves would share one, each leaf's position (``"00000"``, …) instead."""
    flat = jax.tree_util.tree_flatten_with_path(tree)[0]
    names = [path_name(path) for path, _ in flat]
    if len(set(names)) != len(names) or any(not n for n in names):
        names = [f"{i:05d}" for i in range(len(names))]
    return names


def positional(names: list[str]) -> bool:
    """Whether ``names`` are leaf positions (``"00000"``, …): the layout of a program's
    checkpoint from before its leaves were named by key path."""
    return names == [f"{i:05d}" for i in range(len(names))]


def is_key(x: Any) -> bool:
    """Whether ``x`` is a jax array of typed PRNG keys."""
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def _packable(x: Any) -> bool:
    if jax.process_count() > 1:
        return False
    if isinstance(x, jax.Array):
        if not x.is_fully_addressable:
            return False
    elif not isinstance(x, np.ndarray | np.generic):
        return False
    return int(x.nbytes) <= PACK_MAX_BYTES


def pack(state: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """``(item, layout)``: the arrays Orbax writes, and how to rebuild ``state`` from them."""
    flat, _ = jax.tree_util.tree_flatten_with_path(state)
    names = leaf_names(state)
    chunks: dict[str, list[np.ndarray]] = {}
    sizes: dict[str, int] = {}
    item: dict[str, Any] = {}
    layout: list[dict[str, Any]] = []
    for i, (_, leaf) in enumerate(flat):
        entry: dict[str, Any] = {
            "path": names[i],
            "shape": [int(d) for d in np.shape(leaf)],
        }
        if _packable(leaf):
            if is_key(leaf):
                host = np.asarray(jax.random.key_data(leaf))
                entry.update(key_impl=str(jax.random.key_impl(leaf)), data_shape=list(host.shape))
            else:
                host = np.asarray(leaf)
            dtype = host.dtype.name
            offset = sizes.get(dtype, 0)
            chunks.setdefault(dtype, []).append(host.reshape(-1))
            sizes[dtype] = offset + host.size
            entry.update(dtype=dtype, buffer=f"{_PACKED}{dtype}", offset=offset)
        else:
            name = f"{_LEAF}{i:05d}"
            item[name] = leaf
            entry.update(dtype=str(getattr(leaf, "dtype", "")), item=name)
        layout.append(entry)
    for dtype, parts in chunks.items():
        item[f"{_PACKED}{dtype}"] = np.concatenate(parts)
    return item, layout


def layout_shapes(layout: list[dict[str, Any]]) -> dict[str, tuple[int, ...]]:
    """Key path → shape of every leaf the layout describes (for structure checks)."""
    return {e["path"]: tuple(e["shape"]) for e in layout}


def item_template(layout: list[dict[str, Any]], template: Any) -> dict[str, Any]:
    """The restore target: packed buffers as host numpy, own items as the template's leaves."""
    leaves = jax.tree_util.tree_leaves(template)
    target: dict[str, Any] = {}
    sizes: dict[str, tuple[int, str]] = {}
    for entry, leaf in zip(layout, leaves, strict=True):
        if "item" in entry:
            target[entry["item"]] = leaf
        else:
            end = entry["offset"] + int(np.prod(_data_shape(entry), dtype=np.int64))
            size, _ = sizes.get(entry["buffer"], (0, entry["dtype"]))
            sizes[entry["buffer"]] = (max(size, end), entry["dtype"])
    for name, (size, dtype) in sizes.items():
        target[name] = np.empty((size,), dtype=_np_dtype(dtype))
    return target


def _np_dtype(name: str) -> np.dtype[Any]:
    """numpy's dtype for a name ``np.dtype(...).name`` wrote (bfloat16 included)."""
    try:
        return np.dtype(name)
    except TypeError:
        return np.dtype(getattr(jax.numpy, name))


def _data_shape(entry: Mapping[str, Any]) -> tuple[int, ...]:
    """The shape of a packed leaf's values (a PRNG key's: its key data's)."""
    return tuple(entry.get("data_shape", entry["shape"]))


def _values(item: Mapping[str, Any], entry: Mapping[str, Any]) -> Any:
    """One leaf's values: its own item, or its slice of a packed buffer (host numpy; a
    PRNG key's raw key data)."""
    if "item" in entry:
        return item[entry["item"]]
    shape = _data_shape(entry)
    size = int(np.prod(shape, dtype=np.int64))
    buffer = np.asarray(item[entry["buffer"]])
    return buffer[entry["offset"] : entry["offset"] + size].reshape(shape)


def unpack_by_path(item: Mapping[str, Any], layout: list[dict[str, Any]]) -> dict[str, Any]:
    """Every leaf by its dotted key path, in the layout's order, without a template.

    For a flat dict of host arrays (a sampler's trace) this is the dict itself.
    """
    return {e["path"]: np.array(_values(item, e)) for e in layout}


def unpack(item: Mapping[str, Any], layout: list[dict[str, Any]], template: Any) -> Any:
    """The state, in ``template``'s structure, each leaf placed like the template's leaf.

    A template leaf that is a numpy array gets a numpy array back; a jax array or a
    ``jax.ShapeDtypeStruct`` gets a jax array on its sharding (the default device if
    it has none).
    """
    leaves, treedef = jax.tree_util.tree_flatten(template)
    out: list[Any] = []
    for entry, leaf in zip(layout, leaves, strict=True):
        values = _values(item, entry)
        if "item" in entry:
            out.append(values)
        elif "key_impl" in entry:
            key = jax.random.wrap_key_data(values, impl=entry["key_impl"])
            out.append(jax.device_put(key, getattr(leaf, "sharding", None)))
        elif isinstance(leaf, np.ndarray | np.generic):
            out.append(np.array(values))
        else:
            out.append(jax.device_put(values, getattr(leaf, "sharding", None)))
    return jax.tree_util.tree_unflatten(treedef, out)
