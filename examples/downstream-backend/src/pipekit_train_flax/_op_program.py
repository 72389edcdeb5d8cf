"""The op's forward pass as data: a ``jax.export`` program of the module in evaluation mode.

An NNX module's structure is Python code (its class and ``__call__``), so storing it as
data means storing what that code computes: the module's ``eval()``-mode forward pass,
traced once with the module's weights as *arguments* and a symbolic batch size, exported
as StableHLO (``jax.export``) and serialised (a FlatBuffer; nothing is pickled). Loading
deserialises it and calls it on the saved weights; no module of the user's is imported.

Every op calls its module through this program, whether it was just trained or just
loaded, so a loaded op's outputs equal the saved op's bit for bit.
"""

from __future__ import annotations

from typing import Any

import jax
from flax import nnx
from jax import export

from pipekit_train.errors import CheckpointError, DataError

__all__ = ["ForwardProgram", "export_forward", "per_example_specs"]

BATCH = "batch"


def per_example_specs(inputs: Any) -> Any:
    """``inputs``' pytree of ``(shape without the batch axis, dtype)`` (JSON-able lists)."""
    return jax.tree_util.tree_map(lambda a: [list(a.shape[1:]), str(a.dtype)], inputs)


class ForwardProgram:
    """A deserialised or freshly exported forward pass: ``program(weights, inputs)``."""

    def __init__(self, exported: Any) -> None:
        self.exported = exported
        self._call = jax.jit(exported.call)

    @classmethod
    def from_bytes(cls, data: bytes, source: Any) -> ForwardProgram:
        try:
            return cls(export.deserialize(bytearray(data)))
        except Exception as exc:  # noqa: BLE001 - a truncated, damaged or foreign file
            raise CheckpointError(
                f"{source} cannot be read as an exported forward pass: {type(exc).__name__}: "
                f"{exc} (it was written by another jax, or damaged); load it with like= a "
                "module of the same structure instead"
            ) from exc

    def to_bytes(self) -> bytes:
        return bytes(self.exported.serialize())

    def input_shapes(self) -> list[str]:
        """The per-example inputs the program takes, e.g. ``['float32[batch,4]']``."""
        args, _ = jax.tree_util.tree_unflatten(self.exported.in_tree, self.exported.in_avals)
        return [str(a) for a in jax.tree_util.tree_leaves(args[1])]

    def __call__(self, weights: list[Any], inputs: Any) -> Any:
        try:
            return self._call(weights, inputs)
        except (TypeError, ValueError) as exc:
            leaves = jax.tree_util.tree_leaves(inputs)
            shapes = [f"{getattr(x, 'dtype', '?')}{list(getattr(x, 'shape', ()))}" for x in leaves]
            raise DataError(
                f"NnxModelOp: inputs {shapes} do not fit the op's forward pass, which takes "
                f"{self.input_shapes()} ({type(exc).__name__}: {exc})"
            ) from exc


def export_forward(graphdef: Any, params: Any, rngs: Any, rest: Any, inputs: Any) -> ForwardProgram:
    """Export ``merge(graphdef, …).eval()(inputs)`` with the weights as arguments.

    The weights are the leaves of ``(params, rest)``; the RNG state (unused in evaluation
    mode) is a constant of the program. Every input leaf gets the same symbolic batch axis.
    """
    leaves, treedef = jax.tree_util.tree_flatten((params, rest))

    def forward(weights: list[Any], x: Any) -> Any:
        p, r = jax.tree_util.tree_unflatten(treedef, weights)
        model = nnx.merge(graphdef, p, rngs, r)
        model.eval()
        return model(x)

    (batch,) = export.symbolic_shape(BATCH)
    args = [jax.ShapeDtypeStruct(np_shape(x), x.dtype) for x in leaves]
    specs = jax.tree_util.tree_map(
        lambda a: jax.ShapeDtypeStruct((batch, *a.shape[1:]), a.dtype), inputs
    )
    try:
        exported = export.export(jax.jit(forward))(args, specs)
    except Exception as exc:  # noqa: BLE001 - the module's forward pass cannot be exported
        raise DataError(
            f"NnxModelOp: the module's forward pass cannot be traced on inputs "
            f"{jax.tree_util.tree_map(lambda a: f'{a.dtype}{list(a.shape)}', inputs)} with a "
            f"symbolic batch size: {type(exc).__name__}: {exc}"
        ) from exc
    return ForwardProgram(exported)


def np_shape(x: Any) -> tuple[int, ...]:
    return tuple(int(d) for d in x.shape)
