"""The sampler as a core program: phases ``warmup`` then ``sampling``, draws as the trace.

Chunking, ``lax.scan``, checkpoint conversion and resume are core's
(:mod:`pipekit_train.jax.program`, :func:`pipekit_train.engine.run_driver`);
this module only says what one step is. The carry is the ``HMCState``
(adaptation state and the chain's own ``rng_key`` included), so the step ignores
the driver's per-step key: NumPyro's stream lives in the state, which is what
makes the draws equal ``MCMC.run``'s.
"""

from __future__ import annotations

from typing import Any

import jax

from pipekit_train.adapters.bayes import SAMPLE_PREFIX
from pipekit_train.engine import Phase
from pipekit_train.jax.program import Program, build_program

from ._chain import ChainStep

__all__ = ["build_sampler_program", "SAMPLE_PREFIX", "STAT_NAMES"]

STAT_NAMES = ("diverging", "accept_prob", "num_steps", "potential_energy")
#: The draw's statistics into the trace, under ArviZ's names (``STAT_KEYS``).
TRACE_STATS = {
    "diverging": "diverging",
    "tree_depth": "tree_depth",
    "energy": "energy",
    "step_size": "step_size",
    "num_steps": "n_steps",
    "accept_prob": "acceptance_rate",
}


def _metrics(draw: dict[str, Any]) -> dict[str, Any]:
    return {name: draw[name] for name in STAT_NAMES}


def build_sampler_program(
    chain: ChainStep, state: Any, seed: int, *, fixed_chunk: int | None = None
) -> Program:
    """A program of ``num_warmup`` warmup steps (no trace) and ``num_samples`` draws.

    Both phases run the *same* step (NumPyro's ``sample`` adapts while ``state.i <
    num_warmup``, as in ``MCMC.run``), so one chunk length compiles one program for
    warmup and sampling alike; the warmup's outputs are simply not collected.

    ``fixed_chunk``: the run's ``steps_per_call``. A NUTS scan compiles for ~1.3 s (eight
    schools, 2 cores), so one scan length compiles (in a long run the loop's regular
    chunk, core's ``regular_chunk``) with the one-step call, and a chunk of another length (a phase
    ending between two events, a kill signal) runs as single steps: the same transition
    behind the same ``jit`` boundary, so the same bits.
    """

    def step(carry: Any, batch: Any, key: jax.Array) -> tuple[Any, ...]:
        new, draw = chain.step(carry)
        outputs = {f"{SAMPLE_PREFIX}{k}": v for k, v in draw["samples"].items()}
        outputs.update({arviz: draw[name] for name, arviz in TRACE_STATS.items()})
        outputs["lp"] = -draw["potential_energy"]
        return new, _metrics(draw), outputs

    task = chain.task
    return build_program(
        step,
        state,
        base_key=jax.random.PRNGKey(seed),
        phases=[
            Phase("warmup", task.num_warmup, collect=False),
            Phase("sampling", task.num_samples, collect=True),
        ],
        fixed_chunk=fixed_chunk,
    )
