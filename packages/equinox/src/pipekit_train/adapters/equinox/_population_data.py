"""The batches of a population whose members have their own seeds (their own data order).

Member ``i`` reads exactly the batches its solo run reads (the engine's ``BatchSource``
with its seed); a chunk of ``k`` steps is stacked to ``(k, N, B, …)``, so the vmapped
step sees each member's own batch. Its position is the members' positions, in order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pipekit_train.engine import BatchStream
from pipekit_train.errors import CheckpointError

__all__ = ["MemberBatches"]


class MemberBatches(BatchStream):
    """``N`` batch streams read side by side, the member axis after the step axis."""

    def __init__(self, streams: Sequence[BatchStream]) -> None:
        self.streams = list(streams)

    def next_batch(self) -> dict[str, Any]:
        parts = [s.next_batch() for s in self.streams]
        return {name: np.stack([p[name] for p in parts]) for name in parts[0]}

    def next_chunk(self, k: int) -> Any:
        parts = [s.next_chunk(k) for s in self.streams]
        return {name: np.stack([np.asarray(p[name]) for p in parts], axis=1) for name in parts[0]}

    def prefetch(self, k: int, place: Callable[[Any], Any] | None = None) -> None:
        return None  # the members' gathers are cheap next to a stacked step

    def get_state(self) -> dict[str, Any]:
        return {"members": [s.get_state() for s in self.streams]}

    def set_state(self, state: Any) -> None:
        saved = state.get("members") if isinstance(state, dict) else None
        if not isinstance(saved, list) or len(saved) != len(self.streams):
            raise CheckpointError(
                f"The checkpointed data position {state!r} is not that of a population of "
                f"{len(self.streams)} members with their own seeds."
            )
        for stream, member_state in zip(self.streams, saved, strict=True):
            stream.set_state(member_state)

    def close(self) -> None:
        for stream in self.streams:
            stream.close()
