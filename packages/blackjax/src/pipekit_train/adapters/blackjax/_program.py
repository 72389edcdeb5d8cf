"""A :class:`~._sampler.Sampler` as a core program: its phases, draws as the trace.

Chunking, ``lax.scan``, checkpoints and resume are core's
(:func:`pipekit_train.jax.program.build_program`,
:func:`pipekit_train.engine.run_driver`). This module adds what is common to every
sampler here: the draws (``postprocess`` of each chain's position) as the
collecting phase's outputs under ``sample__<site>``, the sampler statistics beside them
(divergences, tree depth, energy, step size, leapfrog steps, acceptance; ArviZ's names),
and — with several devices — the chains laid out over a one-axis ``chains`` mesh.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from pipekit_train.adapters.bayes import SAMPLE_PREFIX
from pipekit_train.jax.program import Program, build_program

from ._sampler import Sampler

__all__ = ["build_sampler_program", "chain_mesh"]


#: A sampler's per-draw statistics that go into the trace, under ArviZ's names (``STAT_KEYS``)
#: where ArviZ has one.
_TRACE_STATS = {
    "diverging": "diverging",
    "tree_depth": "tree_depth",
    "energy": "energy",
    "step_size": "step_size",
    "num_integration_steps": "n_steps",
    "acceptance_rate": "acceptance_rate",
    # mclmc's mean squared energy error per step and dimension: its bias check (_mclmc), not
    # an ArviZ statistic (STAT_KEYS leaves it out of sample_stats)
    "energy_error": "energy_error",
}


def _strong(tree: Any) -> Any:
    """Every leaf as a committed, strongly typed array (one compilation for every call)."""
    return jax.tree_util.tree_map(lambda a: jnp.array(a, dtype=jnp.asarray(a).dtype), tree)


def chain_mesh(num_chains: int) -> Any:
    """A ``chains`` mesh over all devices when there are several and they divide the chains."""
    devices = jax.devices()
    if len(devices) < 2 or num_chains % len(devices):
        return None
    import numpy as np

    return jax.sharding.Mesh(np.asarray(devices), ("chains",))


def build_sampler_program(
    sampler: Sampler,
    postprocess: Callable[[Any], dict[str, Any]],
    base_key: Any,
    *,
    mesh: Any = None,
    fixed_chunk: int | None,
) -> Program:
    """The driver program of ``sampler``; ``postprocess`` maps one chain's position to sites.

    ``fixed_chunk``: the run passes its ``steps_per_call``, so each phase compiles only
    one scan (``run_program`` cuts it to the loop's regular chunk, core's ``regular_chunk``)
    and the one-step call (shorter chunks run as single steps).
    """
    carry = _strong(sampler.carry)
    collect = {p.name for p in sampler.phases if p.collect}

    one_chain = sampler.num_chains == 1

    def drop(tree: dict[str, Any]) -> dict[str, Any]:
        # One chain: no chain axis (scalar metrics per step, the bayes trace layout).
        return {k: v[0] for k, v in tree.items()} if one_chain else tree

    def wrap(step: Any, keep: bool) -> Any:
        def run(c: Any, batch: Any, key: Any) -> tuple[Any, ...]:
            new, stats, position = step(c, batch, key)
            if not keep:
                return new, drop(stats)
            draws = jax.vmap(postprocess)(position)
            outputs = {f"{SAMPLE_PREFIX}{k}": v for k, v in draws.items()}
            for name, arviz in _TRACE_STATS.items():
                if name in stats:
                    outputs[arviz] = stats[name]
            return new, drop(stats), drop(outputs)

        return run

    steps = {name: wrap(fn, name in collect) for name, fn in sampler.steps.items()}
    shardings = out = None
    if mesh is not None:
        from jax.sharding import NamedSharding, PartitionSpec

        def spec(a: Any) -> Any:
            return NamedSharding(mesh, PartitionSpec("chains") if a.ndim else PartitionSpec())

        shardings = jax.tree_util.tree_map(spec, carry)
        carry = jax.tree_util.tree_map(jax.device_put, carry, shardings)
        out = NamedSharding(mesh, PartitionSpec(None, "chains"))
    last = sampler.phases[-1].name
    return build_program(
        steps[last],
        carry,
        base_key=base_key,
        phases=sampler.phases,
        phase_steps=steps,
        carry_shardings=shardings,
        output_sharding=out,
        fixed_chunk=fixed_chunk,
    )
