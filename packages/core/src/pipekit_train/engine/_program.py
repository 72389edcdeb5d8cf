"""What a backend hands the driver: the step program, the batch stream and the store glue.

The whole protocol is declared here, optional members included with their
defaults (as optax declares ``GradientTransformation``), so the driver calls
``program.tree`` or ``data.prefetch`` without asking whether they exist. A
backend subclasses :class:`StepProgram` and :class:`BatchStream` and overrides
what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["Phase", "StepProgram", "BatchStream", "StepCheckpointer", "close_checkpointer"]


@dataclass(frozen=True)
class Phase:
    """One phase of a program: ``steps`` steps named ``name``.

    ``collect``: whether the per-step outputs of this phase go into the trace
    (a sampler's draws: ``False`` for warmup, ``True`` for sampling).
    """

    name: str
    steps: int
    collect: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.steps, bool) or not isinstance(self.steps, int) or self.steps < 0:
            raise ValueError(f"Phase {self.name!r}: steps must be an integer >= 0")


class StepProgram:
    """A backend's compiled step and the conversions of its carry.

    Required: ``train_chunk``, ``fetch``, and the three checkpoint conversions.
    ``train_chunk(carry, batches, step, k)`` runs steps ``step+1 … step+k`` and
    returns ``(carry, metrics)`` or ``(carry, metrics, outputs)``: dicts of
    per-step values with leading axis ``k``, left on the device (the driver
    fetches them at host events). ``batches`` is ``None`` without a data stream.

    Optional, with their defaults: ``phases`` (none: one phase ``"train"`` of
    ``loop.max_steps`` steps), ``evaluate`` (only called with validation data),
    ``tree`` (the carry as callbacks see it: the carry itself) and
    ``place_chunk`` (put a prefetched chunk where the step reads it: as is).
    """

    phases: Sequence[Phase] = ()

    def train_chunk(self, carry: Any, batches: Any, step: int, num_steps: int) -> tuple[Any, ...]:
        raise NotImplementedError

    def fetch(self, tree: Any) -> Any:
        raise NotImplementedError

    def checkpoint_state(self, carry: Any) -> Any:
        raise NotImplementedError

    def checkpoint_template(self, carry: Any) -> Any:
        raise NotImplementedError

    def carry_from_checkpoint(self, state: Any) -> Any:
        raise NotImplementedError

    def evaluate(self, carry: Any) -> dict[str, float]:
        raise NotImplementedError(f"{type(self).__name__} has no evaluation")

    def tree(self, carry: Any) -> Any:
        return carry

    def place_chunk(self, batches: Any) -> Any:
        return batches


class BatchStream:
    """A deterministic source of training batches whose position is a small JSON state.

    Required: ``next_batch`` (or ``next_chunk``), ``get_state``, ``set_state``.
    Optional, with defaults: ``next_chunk(k)`` (``k`` batches stacked on a leading
    axis), ``prefetch(k, place)`` (prepare the next ``k`` batches now without
    moving the position; the driver calls it at a host event so the gather
    overlaps the device's work: nothing by default), ``close``. A stream is also
    a Python iterator of batches.
    """

    def next_batch(self) -> dict[str, Any]:
        raise NotImplementedError

    def next_chunk(self, k: int) -> Any:
        import numpy as np

        batches = [self.next_batch() for _ in range(k)]
        return {key: np.stack([b[key] for b in batches]) for key in batches[0]}

    def prefetch(self, k: int, place: Callable[[Any], Any] | None = None) -> None:
        return None

    def get_state(self) -> dict[str, Any]:
        raise NotImplementedError

    def set_state(self, state: Any) -> None:
        raise NotImplementedError

    def close(self) -> None:
        return None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return self

    def __next__(self) -> dict[str, Any]:
        return self.next_batch()


class StepCheckpointer(Protocol):
    """The checkpoint glue (``pipekit_train.jax.checkpoint.Checkpointer``).

    ``restore`` returns ``None`` (fresh start) or an object with ``step``,
    ``state``, ``meta`` and ``trace``; ``save`` writes state, meta and trace as
    one atomic checkpoint.
    """

    def restore(self, state_template: Any) -> Any: ...

    def save(
        self, step: int, state: Any, meta: dict[str, Any], trace: dict[str, Any] | None = None
    ) -> Any: ...

    def wait(self) -> None: ...

    def close(self) -> None: ...


def close_checkpointer(checkpointer: StepCheckpointer | None) -> None:
    """Finish pending asynchronous writes, then close — on every exit path of a run.

    Called from a ``finally``: the close happens even when waiting fails, so a run that
    ends in an error still leaves every committed checkpoint valid.
    """
    if checkpointer is None:
        return
    try:
        checkpointer.wait()
    finally:
        checkpointer.close()
