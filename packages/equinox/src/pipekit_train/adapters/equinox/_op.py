"""``JaxModelOp``: the Operator over an Equinox module.

It lives in ``pipekit-train-equinox`` (it was ``pipekit_train.jax.ops.JaxModelOp``
in core's ``[jax]`` extra until the engine issue), so core never imports equinox.
Folders saved by the old class load unchanged: the layout and ``op.json`` are the
same, and the old ``op_class`` is mapped by :data:`OLD_OP_CLASSES`.

Saved layout (a directory)::

    weights.eqx   the module's array leaves, eqx.tree_serialise_leaves (.npy records)
    state.eqx     only for a stateful model: the ``eqx.nn.State`` (batch-norm
                  statistics), serialised the same way
    op.json       format version, op class, factory + kwargs, leaf summaries, versions

A stateful model (``eqx.nn.make_with_state``) is held as ``JaxModelOp(module,
state=state)``; the op calls ``module(x, state)`` vmapped with ``axis_name="batch"``
in inference mode and returns the predictions only. ``like=`` may then be a
``(module, state)`` pair, a ``JaxModelOp`` holding both, or a callable returning
one of them; a factory must return one of them too.

Nothing is pickled. Loading needs the module's *structure* (an Equinox module
is code plus arrays; only the arrays are on disk), supplied one of two ways:

1. ``JaxModelOp.load(path, like=skeleton)`` where ``skeleton`` is a module of
   the same structure (its values are ignored) or a zero-argument callable that
   returns one, e.g. ``like=lambda: MLP(64, 10, 256, 2, key=jax.random.key(0))``;
2. the op was created as ``JaxModelOp(module, factory="pkg.mod:make_model",
   factory_kwargs={...})``; ``op.json`` records the import string and the JSON
   kwargs. ``JaxModelOp.load(path, factory=make_model)`` calls the function you
   pass with the recorded kwargs and fills the result with the saved weights.
   ``JaxModelOp.load(path, trusted=True)`` imports the *recorded* string instead —
   only for a folder you trust, since ``op.json`` is a file anyone could have
   edited (``os:system``): without ``factory=``, ``like=`` or ``trusted=`` nothing
   recorded is imported, and the error shows the string and both ways on
   (``pipekit_train._trust``, ``docs/security.md``). The factory must build its own
   PRNG key (e.g. from a ``seed`` kwarg) since keys are not JSON.

The shapes and dtypes of the skeleton's leaves are compared with the summary in
``op.json`` first; a mismatch raises :class:`~pipekit_train.errors.CheckpointError`
naming the first differing leaf path.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from pipekit_train.errors import CheckpointError, ConfigError, DataError, PipekitError
from pipekit_train.operator import build_from_factory, check_factory_record, check_trust

__all__ = ["JaxModelOp"]

FORMAT_VERSION = 1
WEIGHTS_FILE = "weights.eqx"
META_FILE = "op.json"
STATE_FILE = "state.eqx"

#: The ``op_class`` this class records in ``op.json`` (its public import path).
PUBLIC_NAME = "pipekit_train.adapters.equinox:JaxModelOp"

#: ``op_class`` values older versions wrote into ``op.json``, and the class each is now.
OLD_OP_CLASSES = {"pipekit_train.jax.ops:JaxModelOp": PUBLIC_NAME}

_BATCHED_APPLY: Any = None
_BATCHED_STATEFUL_APPLY: Any = None


def _batched_apply() -> Any:
    """``eqx.filter_jit(lambda m, x: jax.vmap(m)(x))``, built once per process.

    ``filter_jit`` keys its cache on the module's structure and the input
    shapes/dtypes, so each op compiles once per input signature.
    """
    global _BATCHED_APPLY
    if _BATCHED_APPLY is None:

        def apply(module: Any, inputs: Any) -> Any:
            return jax.vmap(module)(inputs)

        _BATCHED_APPLY = eqx.filter_jit(apply)
    return _BATCHED_APPLY


def _batched_stateful_apply() -> Any:
    """``vmap(module, axis_name="batch")(x, state)``'s predictions, jit-compiled once."""
    global _BATCHED_STATEFUL_APPLY
    if _BATCHED_STATEFUL_APPLY is None:

        def apply(module: Any, state: Any, inputs: Any) -> Any:
            out, _ = jax.vmap(module, axis_name="batch", in_axes=(0, None), out_axes=(0, None))(
                inputs, state
            )
            return out

        _BATCHED_STATEFUL_APPLY = eqx.filter_jit(apply)
    return _BATCHED_STATEFUL_APPLY


def _check_state(state: Any) -> Any:
    if state is None:
        return None
    if not isinstance(state, eqx.nn.State):
        raise ConfigError(
            f"JaxModelOp: state must be the eqx.nn.State from eqx.nn.make_with_state, got "
            f"{type(state).__module__}.{type(state).__qualname__}",
            field="JaxModelOp.state",
        )
    return state


def _distribution_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _leaf_summary(tree: Any) -> list[dict[str, Any]]:
    """Path, shape and dtype of every leaf that ``tree_serialise_leaves`` writes."""
    out: list[dict[str, Any]] = []
    for key_path, leaf in jax.tree_util.tree_flatten_with_path(tree)[0]:
        path = jax.tree_util.keystr(key_path)
        if isinstance(leaf, (jax.Array, np.ndarray, jax.ShapeDtypeStruct)):
            out.append({"path": path, "shape": list(leaf.shape), "dtype": str(leaf.dtype)})
        elif eqx.is_array_like(leaf):  # Python / NumPy scalars are serialised too
            out.append({"path": path, "scalar": type(leaf).__name__})
    return out


def _describe_leaf(entry: dict[str, Any]) -> str:
    if "shape" in entry:
        return f"shape {tuple(entry['shape'])} {entry['dtype']}"
    return f"scalar {entry.get('scalar')}"


class JaxModelOp:
    """An Operator over an Equinox module (see the module docstring).

    ``JaxModelOp(module, factory=None, factory_kwargs=None)``; ``op.module`` is
    the wrapped ``eqx.Module``. ``op(inputs)`` maps the module over the leading
    (batch) axis of ``inputs`` — a NumPy/JAX array or a pytree of them — under
    ``jax.vmap`` in a jit-compiled function that is cached per input shape. It
    calls the module as ``module(x)`` in inference mode
    (``eqx.nn.inference_mode``: dropout off, batch-norm statistics frozen), or
    ``module(x, state)`` for a stateful model given ``state=`` (an ``eqx.nn.State``).
    """

    def __init__(
        self,
        module: Any,
        *,
        state: Any = None,
        factory: str | None = None,
        factory_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(module, eqx.Module):
            raise ConfigError(
                f"JaxModelOp wraps an equinox.Module, got {type(module).__module__}."
                f"{type(module).__qualname__}",
                field="JaxModelOp.module",
            )
        self._module = module
        self._state = _check_state(state)
        self._factory_kwargs = check_factory_record("JaxModelOp", factory, factory_kwargs)
        self._factory = factory
        self._inference_module: Any = None

    # ------------------------------------------------------------------ accessors

    @property
    def module(self) -> Any:
        """The wrapped ``eqx.Module`` (as trained: inference flags untouched)."""
        return self._module

    @property
    def state(self) -> Any:
        """The model's ``eqx.nn.State`` (batch-norm statistics), or ``None``."""
        return self._state

    @property
    def factory(self) -> str | None:
        """The ``"pkg.module:function"`` import string that builds the skeleton, if any."""
        return self._factory

    @property
    def factory_kwargs(self) -> dict[str, Any] | None:
        """The JSON keyword arguments for :attr:`factory` (a copy), if any."""
        return None if self._factory_kwargs is None else dict(self._factory_kwargs)

    def with_module(self, module: Any, state: Any = None) -> JaxModelOp:
        """A new op of the same class over ``module`` (and ``state``, default: this
        op's), keeping the factory record."""
        return type(self)(
            module,
            state=self._state if state is None else state,
            factory=self._factory,
            factory_kwargs=self._factory_kwargs,
        )

    def __repr__(self) -> str:
        extra = f", factory={self._factory!r}" if self._factory else ""
        return f"{type(self).__name__}({type(self._module).__name__}{extra})"

    # ------------------------------------------------------------------ calling

    def __call__(self, inputs: Any) -> Any:
        """Apply the module to each example of the batch ``inputs``."""
        if self._inference_module is None:
            self._inference_module = eqx.nn.inference_mode(self._module, True)
        batch = jax.tree_util.tree_map(jnp.asarray, inputs)
        leaves = jax.tree_util.tree_leaves(batch)
        if not leaves or any(leaf.ndim == 0 for leaf in leaves):
            raise DataError(
                "JaxModelOp expects a batch: arrays with a leading batch axis, got "
                f"{[tuple(leaf.shape) for leaf in leaves]}"
            )
        sizes = {leaf.shape[0] for leaf in leaves}
        if len(sizes) > 1:
            raise DataError(f"JaxModelOp: input arrays disagree on the batch size: {sorted(sizes)}")
        try:
            if self._state is not None:
                return _batched_stateful_apply()(self._inference_module, self._state, batch)
            return _batched_apply()(self._inference_module, batch)
        except PipekitError:
            raise
        except (TypeError, ValueError) as exc:
            shapes = [f"{tuple(leaf.shape)} {leaf.dtype}" for leaf in leaves]
            raise DataError(
                f"JaxModelOp: {type(self._module).__name__} could not be applied to inputs "
                f"{shapes} (vmapped over the leading axis): {type(exc).__name__}: {exc}"
            ) from exc

    # ------------------------------------------------------------------ save / load

    def _metadata(self) -> dict[str, Any]:
        cls = type(self)
        mod_cls = type(self._module)
        return {
            "format_version": FORMAT_VERSION,
            "op_class": PUBLIC_NAME
            if cls is JaxModelOp
            else f"{cls.__module__}:{cls.__qualname__}",
            "module_class": f"{mod_cls.__module__}:{mod_cls.__qualname__}",
            "factory": self._factory,
            "factory_kwargs": self._factory_kwargs,
            "leaves": _leaf_summary(self._module),
            "state_leaves": None if self._state is None else _leaf_summary(self._state),
            "pipekit_version": _distribution_version("pipekit-train-core"),
            "versions": {
                "pipekit-train-core": _distribution_version("pipekit-train-core"),
                "jax": _distribution_version("jax"),
                "equinox": _distribution_version("equinox"),
            },
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``weights.eqx`` and ``op.json`` into the directory ``path``.

        Each file is written beside its final name and renamed into place, the
        weights first, so ``op.json`` only ever describes complete weights.
        """
        directory = Path(path)
        if directory.exists() and not directory.is_dir():
            raise CheckpointError(f"JaxModelOp.save: {directory} exists and is not a directory")
        meta = self._metadata()
        try:
            directory.mkdir(parents=True, exist_ok=True)
            weights_tmp = directory / f"{WEIGHTS_FILE}.tmp"
            meta_tmp = directory / f"{META_FILE}.tmp"
            with open(weights_tmp, "wb") as f:
                eqx.tree_serialise_leaves(f, self._module)
            if self._state is not None:
                state_tmp = directory / f"{STATE_FILE}.tmp"
                with open(state_tmp, "wb") as f:
                    eqx.tree_serialise_leaves(f, self._state)
                os.replace(state_tmp, directory / STATE_FILE)
            with open(meta_tmp, "w", encoding="utf-8") as f:
                json.dump(meta, f, indent=2, sort_keys=True)
                f.write("\n")
            os.replace(weights_tmp, directory / WEIGHTS_FILE)
            os.replace(meta_tmp, directory / META_FILE)
        except OSError as exc:
            raise CheckpointError(
                f"JaxModelOp.save: cannot write to {directory}: {exc.strerror or exc}"
            ) from exc

    @classmethod
    def _read_metadata(cls, directory: Path) -> dict[str, Any]:
        meta_path = directory / META_FILE
        if not meta_path.is_file() or not (directory / WEIGHTS_FILE).is_file():
            raise CheckpointError(
                f"{directory} is not a saved JaxModelOp: expected {META_FILE} and "
                f"{WEIGHTS_FILE} in it"
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{meta_path} cannot be read: {exc}") from exc
        if not isinstance(meta, dict) or not isinstance(meta.get("leaves"), list):
            raise CheckpointError(f"{meta_path} is not a JaxModelOp description")
        # A folder saved before the move names the old class; it is the same class.
        recorded = str(meta.get("op_class"))
        meta["op_class"] = OLD_OP_CLASSES.get(recorded, recorded)
        version = meta.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise CheckpointError(
                f"{meta_path} has format_version {version!r}; this pipekit-train reads "
                f"format {FORMAT_VERSION} and older: upgrade pipekit-train-core"
            )
        return meta

    @classmethod
    def _skeleton(
        cls, like: Any, factory: Any, trusted: Any, meta: dict[str, Any], directory: Path
    ) -> tuple[Any, Any]:
        """The ``(module, state)`` skeleton (``state`` is ``None`` for a stateless model).

        From ``like``, else ``factory(**recorded kwargs)``, else the recorded factory if
        ``trusted`` allows it; a recorded string is never imported otherwise.
        """

        def unwrap(obj: Any, what: str) -> tuple[Any, Any]:
            if isinstance(obj, JaxModelOp):
                return obj.module, obj.state
            if isinstance(obj, eqx.Module) and not isinstance(obj, eqx.nn.State):
                return obj, None
            if (
                isinstance(obj, tuple)
                and len(obj) == 2
                and isinstance(obj[0], eqx.Module)
                and isinstance(obj[1], eqx.nn.State)
            ):
                return obj[0], obj[1]
            raise ConfigError(
                f"JaxModelOp.load: {what} must be an equinox.Module, a (module, state) pair "
                f"from eqx.nn.make_with_state, or a JaxModelOp, got "
                f"{type(obj).__module__}.{type(obj).__qualname__}",
                field="like",
            )

        if like is not None:
            if isinstance(like, (eqx.Module, JaxModelOp, tuple)):
                return unwrap(like, "like")
            if callable(like):
                return unwrap(like(), "like() (the skeleton factory you passed)")
            return unwrap(like, "like")
        recorded = meta.get("factory")
        if factory is not None or recorded:
            built = build_from_factory(
                factory,
                meta,
                trusted=trusted,
                source=directory / META_FILE,
                op="JaxModelOp",
                like_hint="<module or zero-arg callable>",
            )
            name = getattr(factory, "__qualname__", None) if factory is not None else recorded
            return unwrap(built, f"the factory {name!r}'s result")
        raise ConfigError(
            f"JaxModelOp.load({str(directory)!r}) needs the module's structure, and this "
            f"save records no factory. Either pass it: JaxModelOp.load(path, like=skeleton) "
            f"with an equinox.Module of the same structure or a zero-argument callable "
            f"returning one; or create the op as JaxModelOp(module, "
            f"factory='pkg.module:function', factory_kwargs={{...}}) before saving, so that "
            f"load(path, factory=function) can rebuild it.",
            field="like",
        )

    @staticmethod
    def _compare(directory: Path, saved: list[Any], current: list[Any], what: str) -> None:
        for old, new in zip(saved, current, strict=False):
            if old != new:
                where = (
                    old.get("path")
                    if old.get("path") == new.get("path")
                    else f"{old.get('path')} (the skeleton has {new.get('path')} there)"
                )
                raise CheckpointError(
                    f"{directory}: the module structure given to load does not match the "
                    f"saved {what}; first differing leaf {where}: saved "
                    f"{_describe_leaf(old)}, skeleton {_describe_leaf(new)}"
                )
        if len(saved) != len(current):
            longer, label = (
                (saved, f"saved {what}")
                if len(saved) > len(current)
                else (
                    current,
                    "skeleton",
                )
            )
            extra = longer[min(len(saved), len(current))]
            raise CheckpointError(
                f"{directory}: the module structure given to load does not match the saved "
                f"{what}: {len(saved)} saved leaves, {len(current)} in the skeleton; first "
                f"differing leaf {extra.get('path')} (only in the {label})"
            )

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        like: Any = None,
        *,
        factory: Any = None,
        trusted: bool | Sequence[str] = False,
    ) -> JaxModelOp:
        """Rebuild an op written by :meth:`save`.

        The structure comes from ``like`` (a skeleton module or zero-argument callable),
        or ``factory`` (a callable, called with the ``factory_kwargs`` recorded in
        ``op.json``), or — only with ``trusted=True`` or a list of module prefixes
        covering it — the factory import string recorded in ``op.json``. A saved folder
        is data, so without one of these nothing recorded is imported or called
        (:class:`~pipekit_train.errors.UntrustedCodeError`).
        """
        trusted = check_trust(trusted)
        if like is not None and factory is not None:
            raise ConfigError(
                "JaxModelOp.load: give like= (a skeleton) or factory= (called with the "
                "recorded factory_kwargs), not both",
                field="factory",
            )
        directory = Path(path)
        meta = cls._read_metadata(directory)
        skeleton, state_skeleton = cls._skeleton(like, factory, trusted, meta, directory)
        cls._compare(directory, meta["leaves"], _leaf_summary(skeleton), "weights")
        saved_state = meta.get("state_leaves")
        if (saved_state is None) != (state_skeleton is None):
            if saved_state is not None:
                has, skeleton_has, give = (
                    "a model state",
                    "has none",
                    "the (module, state) pair from eqx.nn.make_with_state",
                )
            else:
                has, skeleton_has, give = "no model state", "has one", "the module alone"
            raise CheckpointError(
                f"{directory}: the save has {has} but the skeleton given to load "
                f"{skeleton_has}; pass {give} as like= (or from the factory)"
            )
        state = None
        if state_skeleton is not None and saved_state is not None:
            cls._compare(directory, saved_state, _leaf_summary(state_skeleton), "model state")
            try:
                with open(directory / STATE_FILE, "rb") as f:
                    state = eqx.tree_deserialise_leaves(f, state_skeleton)
            except Exception as exc:  # noqa: BLE001 - truncated or corrupted file
                raise CheckpointError(
                    f"{directory / STATE_FILE} cannot be read into the model state: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        try:
            with open(directory / WEIGHTS_FILE, "rb") as f:
                module = eqx.tree_deserialise_leaves(f, skeleton)
        except Exception as exc:  # noqa: BLE001 - truncated or corrupted file
            raise CheckpointError(
                f"{directory / WEIGHTS_FILE} cannot be read into the module: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return cls(
            module,
            state=state,
            factory=meta.get("factory"),
            factory_kwargs=meta.get("factory_kwargs"),
        )
