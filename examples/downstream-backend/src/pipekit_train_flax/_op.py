"""``NnxModelOp``: the trained Operator over a ``flax.nnx.Module``.

``op(inputs)`` runs the module in evaluation mode (``Module.eval()``: dropout off) on the
batch ``inputs``, through its forward pass exported with ``jax.export``
(:mod:`._op_program`), jit-compiled once per input shape. ``op.save(path)`` writes a
folder of data::

    weights.npz        the module's weights (parameters and other state: group "w") and
                       RNG state (group "r", as key data), NumPy arrays (no pickle)
    forward.jaxexport  the forward pass as serialised StableHLO (the structure, as data)
    op.json            format version, op and module class (descriptions, not import
                       strings), factory + kwargs, leaf summaries, input shapes, versions

``NnxModelOp.load(path)`` needs no code of the user's: it deserialises the forward pass
and calls it on the saved weights (the op then has no ``.module``). To get an
``nnx.Module`` back, give its structure the way ``JaxModelOp`` (the equinox backend's op)
takes it:

1. ``like=``: a module of the same structure (its values are ignored), an ``NnxModelOp``
   holding one, or a zero-argument callable returning one;
2. ``factory=``: a callable, called with the ``factory_kwargs`` recorded in ``op.json``
   (create the op as ``NnxModelOp(module, factory="pkg.mod:make", factory_kwargs={...})``);
3. ``trusted=True`` (or a list of module prefixes covering it): the factory *import
   string* recorded in ``op.json`` is imported and called. Only for a folder you trust:
   a recorded string is never imported otherwise, and without ``trusted`` a recorded
   factory is simply not used (core's trust rules, ``pipekit_train.operator``).

A skeleton's leaves are compared with the saved summary first; a mismatch is a
``CheckpointError`` naming the first differing leaf.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from pipekit_train.errors import CheckpointError, ConfigError, DataError
from pipekit_train.operator import build_from_factory, check_factory_record, check_trust

from ._model import split_parts
from ._op_files import (
    compare,
    fill,
    host_arrays,
    leaf_summary,
    read_arrays,
    replace_into,
    write_arrays,
)
from ._op_program import ForwardProgram, export_forward, per_example_specs

__all__ = ["NnxModelOp"]

FORMAT_VERSION = 1
WEIGHTS_FILE = "weights.npz"
PROGRAM_FILE = "forward.jaxexport"
META_FILE = "op.json"
#: How ``op.json`` names the class: a description (dotted), never an import string.
PUBLIC_NAME = "pipekit_train_flax.NnxModelOp"


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _as_batch(inputs: Any) -> Any:
    """``inputs`` as JAX arrays with a leading batch axis (else a ``DataError``)."""
    batch = jax.tree_util.tree_map(jnp.asarray, inputs)
    leaves = jax.tree_util.tree_leaves(batch)
    if not leaves or any(leaf.ndim == 0 for leaf in leaves):
        raise DataError(
            "NnxModelOp expects a batch: arrays with a leading batch axis, got "
            f"{[tuple(leaf.shape) for leaf in leaves]}"
        )
    if len({leaf.shape[0] for leaf in leaves}) > 1:
        raise DataError(
            f"NnxModelOp: input arrays disagree on the batch size: "
            f"{sorted({leaf.shape[0] for leaf in leaves})}"
        )
    return batch


class NnxModelOp:
    """An Operator over a ``flax.nnx.Module`` (see the module docstring).

    ``NnxModelOp(module, example_inputs=None, factory=None, factory_kwargs=None)`` keeps
    ``nnx.split(module)``: later changes to the module object do not change the op.
    ``example_inputs`` (a batch) fixes the per-example input shapes of the exported
    forward pass now; without it the first call does (``save`` needs one of the two).
    """

    def __init__(
        self,
        module: Any,
        *,
        example_inputs: Any = None,
        factory: str | None = None,
        factory_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if not isinstance(module, nnx.Module):
            raise ConfigError(
                f"NnxModelOp wraps a flax.nnx.Module, got {type(module).__module__}."
                f"{type(module).__qualname__}",
                field="NnxModelOp.module",
            )
        self._factory_kwargs = check_factory_record("NnxModelOp", factory, factory_kwargs)
        self._factory = factory
        self._module_class = f"{type(module).__module__}.{type(module).__qualname__}"
        self._graphdef: Any
        self._rngs: Any
        self._states: Any
        self._graphdef, params, self._rngs, rest = split_parts(module)
        self._states = (params, rest)
        self._weights: list[Any] = jax.tree_util.tree_leaves(self._states)
        self._rng_arrays = host_arrays(jax.tree_util.tree_leaves(self._rngs))
        self._summary = {
            "leaves": leaf_summary(self._states),
            "rng_leaves": leaf_summary(self._rngs),
        }
        self._program: ForwardProgram | None = None
        self._inputs: Any = None
        if example_inputs is not None:
            self._export(_as_batch(example_inputs))

    @classmethod
    def _from_files(
        cls, meta: dict[str, Any], program: ForwardProgram, arrays: dict[str, list[Any]]
    ) -> NnxModelOp:
        """An op over the saved forward pass and weights alone (no module)."""
        op = cls.__new__(cls)
        op._factory = meta.get("factory")
        op._factory_kwargs = meta.get("factory_kwargs")
        op._module_class = str(meta.get("module_class"))
        op._graphdef = op._rngs = op._states = None
        op._weights = [jnp.asarray(a) for a in arrays["w"]]
        op._rng_arrays = list(arrays["r"])
        op._summary = {"leaves": meta["leaves"], "rng_leaves": meta.get("rng_leaves") or []}
        op._program = program
        op._inputs = meta.get("inputs")
        return op

    # ------------------------------------------------------------------ accessors

    @property
    def module(self) -> Any:
        """A new ``nnx.Module`` holding the op's values (in the mode it was trained in)."""
        if self._graphdef is None:
            raise ConfigError(
                "NnxModelOp.module: this op was loaded from its saved forward pass alone, "
                f"without the module's code ({self._module_class}); load it with "
                "NnxModelOp.load(path, like=<module or zero-arg callable>) or factory= to get "
                "the nnx.Module back",
                field="like",
            )
        params, rest = jax.tree_util.tree_map(jnp.copy, self._states)
        return nnx.merge(self._graphdef, params, self._rngs, rest)

    @property
    def factory(self) -> str | None:
        """The ``"pkg.module:function"`` that builds the skeleton, if one was recorded."""
        return self._factory

    @property
    def factory_kwargs(self) -> dict[str, Any] | None:
        """The JSON keyword arguments for :attr:`factory` (a copy), if any."""
        return None if self._factory_kwargs is None else dict(self._factory_kwargs)

    def with_module(self, module: Any, example_inputs: Any = None) -> NnxModelOp:
        """An op of the same class over ``module``, keeping the factory record."""
        return type(self)(
            module,
            example_inputs=example_inputs,
            factory=self._factory,
            factory_kwargs=self._factory_kwargs,
        )

    def __repr__(self) -> str:
        extra = f", factory={self._factory!r}" if self._factory else ""
        return f"{type(self).__name__}({self._module_class.rpartition('.')[2]}{extra})"

    # ------------------------------------------------------------------ calling

    def _export(self, batch: Any) -> ForwardProgram:
        params, rest = self._states
        self._program = export_forward(self._graphdef, params, self._rngs, rest, batch)
        self._inputs = per_example_specs(batch)
        return self._program

    def __call__(self, inputs: Any) -> Any:
        """The module's predictions (evaluation mode) for the batch ``inputs``."""
        batch = _as_batch(inputs)
        program = self._program if self._program is not None else self._export(batch)
        return program(self._weights, batch)

    # ------------------------------------------------------------------ save / load

    def _metadata(self) -> dict[str, Any]:
        cls = type(self)
        return {
            "format_version": FORMAT_VERSION,
            "op_class": PUBLIC_NAME
            if cls is NnxModelOp
            else f"{cls.__module__}.{cls.__qualname__}",
            "module_class": self._module_class,
            "factory": self._factory,
            "factory_kwargs": self._factory_kwargs,
            **self._summary,
            "inputs": self._inputs,
            "versions": {
                name: _version(name)
                for name in ("pipekit-train-core", "pipekit-train-flax", "jax", "flax")
            },
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``weights.npz``, ``forward.jaxexport`` and then ``op.json`` into ``path``.

        Each file is written beside its final name and renamed into place, ``op.json``
        last, so it only ever describes complete files.
        """
        if self._program is None:
            raise CheckpointError(
                "NnxModelOp.save: the op has not seen an input yet, so its forward pass has "
                "no input shape to be exported with; call it once on a batch, or create it "
                "as NnxModelOp(module, example_inputs=batch)"
            )
        directory = Path(path)
        if directory.exists() and not directory.is_dir():
            raise CheckpointError(f"NnxModelOp.save: {directory} exists and is not a folder")
        meta = self._metadata()
        program = self._program.to_bytes()
        groups = {"w": host_arrays(self._weights), "r": self._rng_arrays}
        try:
            directory.mkdir(parents=True, exist_ok=True)
            replace_into(directory, WEIGHTS_FILE, lambda tmp: write_arrays(tmp, groups))
            replace_into(directory, PROGRAM_FILE, lambda tmp: tmp.write_bytes(program))
            replace_into(
                directory,
                META_FILE,
                lambda tmp: tmp.write_text(
                    json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8"
                ),
            )
        except OSError as exc:
            raise CheckpointError(
                f"NnxModelOp.save: cannot write to {directory}: {exc.strerror or exc}"
            ) from exc

    @staticmethod
    def _read_metadata(directory: Path) -> dict[str, Any]:
        meta_path = directory / META_FILE
        missing = [
            n for n in (META_FILE, WEIGHTS_FILE, PROGRAM_FILE) if not (directory / n).is_file()
        ]
        if missing:
            raise CheckpointError(
                f"{directory} is not a saved NnxModelOp: {', '.join(missing)} missing from it"
            )
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CheckpointError(f"{meta_path} cannot be read: {exc}") from exc
        if not isinstance(meta, dict) or not isinstance(meta.get("leaves"), list):
            raise CheckpointError(f"{meta_path} is not an NnxModelOp description")
        version = meta.get("format_version")
        if not isinstance(version, int) or version > FORMAT_VERSION:
            raise CheckpointError(
                f"{meta_path} has format_version {version!r}; this pipekit-train-flax reads "
                f"format {FORMAT_VERSION} and older: upgrade pipekit-train-flax"
            )
        return meta

    @staticmethod
    def _skeleton(
        like: Any, factory: Any, trusted: Any, meta: dict[str, Any], directory: Path
    ) -> Any:
        """The module whose structure the saved values fill, or ``None`` (use the program).

        ``like``, else ``factory(**recorded kwargs)``, else — only when ``trusted`` is
        given — the recorded factory; without any of them the saved program is used and
        nothing recorded is imported.
        """

        def unwrap(obj: Any, what: str) -> Any:
            if isinstance(obj, NnxModelOp):
                return obj.module
            if isinstance(obj, nnx.Module):
                return obj
            raise ConfigError(
                f"NnxModelOp.load: {what} must be a flax.nnx.Module or an NnxModelOp, got "
                f"{type(obj).__module__}.{type(obj).__qualname__}",
                field="like",
            )

        if like is not None:
            if isinstance(like, (nnx.Module, NnxModelOp)) or not callable(like):
                return unwrap(like, "like")
            return unwrap(like(), "like() (the skeleton factory you passed)")
        if factory is None and trusted is False:
            return None
        if factory is None and not meta.get("factory"):
            raise ConfigError(
                f"NnxModelOp.load({str(directory)!r}, trusted=...): the save records no "
                "factory to trust; load it without trusted= (the saved forward pass), or give "
                "like= a module of the same structure",
                field="trusted",
            )
        built = build_from_factory(
            factory,
            meta,
            trusted=trusted,
            source=directory / META_FILE,
            op="NnxModelOp",
            like_hint="<nnx.Module or zero-arg callable>",
        )
        name = getattr(factory, "__qualname__", None) if factory is not None else meta["factory"]
        return unwrap(built, f"the factory {name!r}'s result")

    @classmethod
    def load(
        cls,
        path: str | os.PathLike[str],
        like: Any = None,
        *,
        factory: Any = None,
        trusted: bool | Sequence[str] = False,
    ) -> NnxModelOp:
        """Rebuild an op written by :meth:`save` (see the module docstring for the ways)."""
        trusted = check_trust(trusted)
        if like is not None and factory is not None:
            raise ConfigError(
                "NnxModelOp.load: give like= (a skeleton) or factory= (called with the "
                "recorded factory_kwargs), not both",
                field="factory",
            )
        directory = Path(path)
        meta = cls._read_metadata(directory)
        rng_summary = meta.get("rng_leaves") or []
        arrays = read_arrays(
            directory / WEIGHTS_FILE, {"w": len(meta["leaves"]), "r": len(rng_summary)}
        )
        program = ForwardProgram.from_bytes(
            (directory / PROGRAM_FILE).read_bytes(), directory / PROGRAM_FILE
        )
        skeleton = cls._skeleton(like, factory, trusted, meta, directory)
        if skeleton is None:
            return cls._from_files(meta, program, arrays)
        graphdef, params, rngs, rest = split_parts(skeleton)
        compare(directory, meta["leaves"], leaf_summary((params, rest)), "weights")
        compare(directory, rng_summary, leaf_summary(rngs), "RNG state")
        params, rest = fill((params, rest), arrays["w"])
        op = cls(
            nnx.merge(graphdef, params, fill(rngs, arrays["r"]), rest),
            factory=meta.get("factory"),
            factory_kwargs=meta.get("factory_kwargs"),
        )
        op._program, op._inputs = program, meta.get("inputs")
        return op
