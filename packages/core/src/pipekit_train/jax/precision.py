"""``TrainingLoop.precision`` on the JAX backends: which dtype holds what, and the casts.

- ``"float32"``: nothing is cast (the default; the compiled step is unchanged).
- ``"bfloat16"``: the model's floating leaves are converted to bfloat16 once, before
  training, so parameters, gradients, optimiser state and compute are all bfloat16;
  floating batch arrays are cast to bfloat16 inside the step.
- ``"mixed-bfloat16"``: parameters (and optimiser state) stay float32; inside the loss
  the floating leaves of the model and of the batch are cast to bfloat16, so the
  forward and backward passes run in bfloat16, and the gradients come back float32
  through the cast. The loss is reported in float32.

Model state (``eqx.nn.State``: batch-norm statistics) is stored in its own dtype:
the model sees it cast to the compute dtype (batch-norm mixes it with bfloat16
batch statistics) and the new state is cast back to the stored dtypes, so the
carry's structure never changes between steps.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.jax._deps import missing_jax_extra

try:
    import jax
    import jax.numpy as jnp
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = ["compute_dtype", "cast_floating", "cast_like", "storage_tree"]


def compute_dtype(precision: str) -> Any:
    """The dtype the forward and backward passes run in (``None``: no cast)."""
    return None if precision == "float32" else jnp.bfloat16


def cast_floating(tree: Any, dtype: Any) -> Any:
    """``tree`` with every floating array leaf cast to ``dtype`` (others untouched)."""
    if dtype is None:
        return tree

    def cast(x: Any) -> Any:
        if isinstance(x, jax.Array | jax.ShapeDtypeStruct) or hasattr(x, "dtype"):
            if jnp.issubdtype(x.dtype, jnp.floating):
                return jnp.asarray(x).astype(dtype)
        return x

    return jax.tree_util.tree_map(cast, tree)


def cast_like(tree: Any, like: Any) -> Any:
    """``tree`` with each array leaf cast to the dtype of the matching leaf of ``like``."""
    return jax.tree_util.tree_map(
        lambda x, ref: x.astype(ref.dtype) if hasattr(x, "astype") and x.dtype != ref.dtype else x,
        tree,
        like,
    )


def storage_tree(tree: Any, precision: str) -> Any:
    """The tree as training stores it: bfloat16 floating leaves for ``"bfloat16"``."""
    return cast_floating(tree, jnp.bfloat16) if precision == "bfloat16" else tree
