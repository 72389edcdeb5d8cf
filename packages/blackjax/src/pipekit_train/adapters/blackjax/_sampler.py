"""The shape every sampler of this backend has, whatever its algorithm.

A :class:`Sampler` is a host-side ``init`` (the first carry, chains stacked on a
leading axis) plus pure step functions for its phases. The steps take the
driver's per-step key and split it over the chains, so a draw depends only on
the step number — never on how the driver chunks the run. Everything a
sampler adapts (step size, mass matrix, L) lives in the carry, traced, so the
one-step call and the ``lax.scan`` chunks compile the same step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pipekit_train.engine import Phase

__all__ = ["Sampler", "StepFn", "over_chains", "around", "chain_count"]

#: ``step(carry, batch, key) -> (carry, metrics, position)``; ``position`` has the chain axis.
StepFn = Callable[[Any, Any, Any], tuple[Any, dict[str, Any], Any]]


def over_chains(fn: Callable[..., Any], num_chains: int, in_axes: Any = 0) -> Callable[..., Any]:
    """``fn`` of one chain applied to every chain (leading axis): ``jax.vmap``, except for a
    single chain, whose arguments lose and whose results regain the axis — an unbatched
    step (NUTS's while loop under ``vmap`` costs ~35 % for one chain, measured)."""
    import jax
    import jax.numpy as jnp

    if num_chains > 1:
        return jax.vmap(fn, in_axes=in_axes)
    axes = in_axes if isinstance(in_axes, tuple) else None

    def one(*args: Any) -> Any:
        squeezed = [
            a if axes is not None and axes[i] is None else jax.tree_util.tree_map(lambda v: v[0], a)
            for i, a in enumerate(args)
        ]
        # jnp.asarray: a leaf may be a Python number (hmc's num_integration_steps), which
        # vmap would have broadcast to an array
        return jax.tree_util.tree_map(lambda v: jnp.asarray(v)[None], fn(*squeezed))

    return one


def chain_count(positions: Any) -> int:
    """The number of chains in ``positions`` (every leaf stacked on a leading chain axis)."""
    import jax

    return int(jax.tree_util.tree_leaves(positions)[0].shape[0])


def around(key: Any, center: Any, scale: float, n: int) -> Any:
    """``n`` points ``center + scale · N(0, 1)`` (leading axis ``n``), one key per leaf: the
    first particles of the particle samplers (smc, svgd)."""
    import jax
    import jax.numpy as jnp

    leaves, treedef = jax.tree_util.tree_flatten(center)
    keys = jax.random.split(key, len(leaves))
    out = [
        c + scale * jax.random.normal(k, (n, *jnp.shape(c)), jnp.result_type(c))
        for k, c in zip(keys, leaves, strict=True)
    ]
    return jax.tree_util.tree_unflatten(treedef, out)


@dataclass
class Sampler:
    """One algorithm, ready for the program builder.

    Attributes:
        carry: the initial carry (every leaf but counters has a leading chain axis).
        phases: the driver phases, in order; the last one collects the draws.
        steps: phase name → its step function.
        step_meaning: what one driver step is, for ``backend_info`` and the docs.
        uses_batches: whether the steps read minibatches from the driver's data stream.
        num_chains: the chains, vmapped in every step.
    """

    num_chains: int
    carry: Any
    phases: list[Phase]
    steps: dict[str, StepFn]
    step_meaning: str
    uses_batches: bool = False
    info: dict[str, Any] = field(default_factory=dict)
