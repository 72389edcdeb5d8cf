"""When a population beats sequential trials: a documented rule, from measurements.

Measured on a 2-core CPU (issue 23, and ``benchmarks`` case 17): 16 learning rates of a
64-32-10 MLP at batch 128 vmapped into one program ran 2.6x faster than the same 16
trials one after another; for the digits MLP 64-256-256-10 the population was slower
(0.66x): on CPU, one batched matmul of that size loses to separate ones. What decides
is the work of one member's step, about (trainable parameters) x (rows per step):
2,410 x 128 = 0.3 M pays, 85,002 x 128 = 10.9 M loses. The CPU threshold sits between
them (``CPU_WORK_LIMIT``). On an accelerator the vmapped program fills the device that a
small solo run leaves idle, so a population is expected to pay there (not measured on
this project's machines; ``benchmarks`` case 17 measures it where one is present).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import numpy as np

__all__ = ["CPU_WORK_LIMIT", "PopulationChoice", "population_pays"]

#: Parameters x rows per step of one member, at or below which a population pays on CPU.
CPU_WORK_LIMIT = 2_000_000


@dataclass(frozen=True)
class PopulationChoice:
    """Whether a population of ``size`` beats ``size`` sequential trials, and why.

    ``bool(choice)`` is ``pays``; ``work`` is trainable parameters x rows per step.
    """

    pays: bool
    reason: str
    size: int
    platform: str
    work: int

    def __bool__(self) -> bool:
        return self.pays

    def as_dict(self) -> dict[str, Any]:
        return {
            "pays": self.pays,
            "reason": self.reason,
            "size": self.size,
            "platform": self.platform,
            "work": self.work,
        }


def _parameter_count(model_op: Any) -> int:
    from ._run import _unwrap_model

    _, module, _ = _unwrap_model(model_op)
    leaves = jax.tree_util.tree_leaves(eqx.filter(module, eqx.is_inexact_array))
    return int(sum(int(np.prod(np.shape(leaf))) for leaf in leaves))


def population_pays(loop: Any, n: int) -> PopulationChoice:
    """Whether ``n`` members of ``loop`` run faster as one vmapped population (the rule above).

    Reads only the model's parameter count, the rows per step and the JAX platform;
    compiles nothing.
    """
    platform = jax.default_backend()
    params = _parameter_count(loop.model_op)
    work = params * int(loop.batch_size) * int(loop.accumulate_steps)
    if n < 2:
        return PopulationChoice(False, "a population of one is a solo run", n, platform, work)
    if platform != "cpu":
        return PopulationChoice(
            True,
            f"on {platform} one vmapped program of {n} members fills the device that a solo "
            "run of this size leaves idle",
            n,
            platform,
            work,
        )
    pays = work <= CPU_WORK_LIMIT
    verdict = "at or below" if pays else "above"
    return PopulationChoice(
        pays,
        f"on cpu a member's step works on {params:,} parameters x "
        f"{loop.batch_size * loop.accumulate_steps} rows = {work:,}, {verdict} the "
        f"{CPU_WORK_LIMIT:,} where vmapped matmuls stop beating separate ones (measured: "
        "0.3 M ran 2.6x faster, 10.9 M 0.66x)",
        n,
        platform,
        work,
    )
