"""A user's ``flax.nnx.Module`` as pure data for a compiled step: split, merge, reseed.

``nnx.split(module, nnx.Param, nnx.RngState, ...)`` gives the graph definition (static,
closed over by the step) and three states:

- ``params``: what the optimiser trains (part of the carry, checkpointed);
- ``rngs``: the module's RNG streams (``nnx.Rngs`` / the stream ``nnx.Dropout`` holds).
  They are *not* carried: every step reseeds them from the driver's step key
  (:func:`reseeded`), so dropout depends on ``TrainingLoop.seed`` and the step number
  only — never on how steps were fused or where a run was resumed;
- ``rest``: every other variable (``nnx.BatchStat``, user variables) — carried, so a
  module that updates state in its forward pass trains and resumes like a stateless one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
from flax import nnx

from pipekit_train.errors import ConfigError

__all__ = ["ModelParts", "split_parts", "split_model", "unwrap_model", "reseeded"]


@dataclass(frozen=True)
class ModelParts:
    """A module taken apart: ``merge()`` rebuilds it (a new object, the same values)."""

    graphdef: Any
    params: Any
    rngs: Any
    rest: Any

    def merge(self, params: Any = None, rest: Any = None, rngs: Any = None) -> Any:
        """The module with ``params`` / ``rest`` / ``rngs`` in place of the split ones.

        Its variables are new objects (``copy=True``) made in the current trace: a layer
        that updates state in its forward pass (``nnx.BatchNorm``) may only mutate a
        variable of its own trace, and the states come from outside (the carry).
        """
        return nnx.merge(
            self.graphdef,
            self.params if params is None else params,
            self.rngs if rngs is None else rngs,
            self.rest if rest is None else rest,
            copy=True,
        )


def _check_arrays(state: Any, what: str) -> None:
    """Every leaf of the carried ``state`` is an array (a jit carry holds nothing else)."""
    for path, leaf in jax.tree_util.tree_flatten_with_path(state)[0]:
        if not isinstance(leaf, (jax.Array, jnp.ndarray)) and not hasattr(leaf, "dtype"):
            raise ConfigError(
                f"TrainingLoop.model_op: the {what} variable at {jax.tree_util.keystr(path)} "
                f"holds {type(leaf).__name__}, not an array; the flax-nnx backend trains "
                "modules whose nnx.Variable values are JAX arrays",
                field="model_op",
            )


def split_parts(module: Any) -> tuple[Any, Any, Any, Any]:
    """``(graphdef, params, rngs, rest)``: ``nnx.split`` by the three filters, in that order."""
    parts: tuple[Any, ...] = nnx.split(module, nnx.Param, nnx.RngState, ...)
    return parts[0], parts[1], parts[2], parts[3]


def split_model(module: Any) -> ModelParts:
    """``module`` as :class:`ModelParts` (its arrays checked)."""
    graphdef, params, rngs, rest = split_parts(module)
    if not jax.tree_util.tree_leaves(params):
        raise ConfigError(
            f"TrainingLoop.model_op: {type(module).__name__} has no nnx.Param to train; "
            "give a module with parameters (e.g. nnx.Linear layers)",
            field="model_op",
        )
    _check_arrays(params, "parameter")
    _check_arrays(rest, "state")
    return ModelParts(graphdef, params, rngs, rest)


def unwrap_model(model_op: Any) -> tuple[Any, Any]:
    """``(op, module)``: the given op (or ``None``) and the ``nnx.Module`` to train."""
    from ._op import NnxModelOp

    if isinstance(model_op, NnxModelOp):
        return model_op, model_op.module
    if isinstance(model_op, nnx.Module):
        return None, model_op
    raise ConfigError(
        "TrainingLoop.model_op must be a flax.nnx.Module (or a pipekit_train_flax.NnxModelOp) "
        f"for the flax-nnx backend; got {type(model_op).__module__}.{type(model_op).__qualname__}"
        " (a 'pkg.module:function' string must return one)",
        field="model_op",
    )


def reseeded(rngs: Any, key: jax.Array) -> Any:
    """The RNG state ``rngs`` with every stream's key derived from ``key`` and its count 0.

    Stream ``i`` (in the state's leaf order) gets ``fold_in(own_key, bits(fold_in(key, i)))``:
    a pure function of the module's own seed, the step key and the stream, whatever key
    implementation the module chose. Counters (``nnx.RngCount``) restart at 0.
    """
    leaves, treedef = jax.tree_util.tree_flatten(rngs)
    variables = jax.tree_util.tree_leaves(rngs, is_leaf=lambda x: isinstance(x, nnx.Variable))
    paired = len(variables) == len(leaves)
    out = []
    for i, leaf in enumerate(leaves):
        is_key = jax.dtypes.issubdtype(leaf.dtype, jax.dtypes.prng_key) or (
            paired and isinstance(variables[i], nnx.RngKey)  # a raw uint32 key
        )
        if is_key:
            salt = jax.random.bits(jax.random.fold_in(key, i), (), jnp.uint32)
            out.append(jax.random.fold_in(leaf, salt))
        elif paired and not isinstance(variables[i], nnx.RngCount):
            out.append(leaf)  # an RNG variable of another kind: kept as it is
        else:
            out.append(jnp.zeros_like(leaf))
    return jax.tree_util.tree_unflatten(treedef, out)
