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

from pipekit_train.driver import Phase

__all__ = ["Sampler", "StepFn"]

#: ``step(carry, batch, key) -> (carry, metrics, position)``; ``position`` has the chain axis.
StepFn = Callable[[Any, Any, Any], tuple[Any, dict[str, Any], Any]]


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
