"""Training data as a fixed-length ``keras.utils.PyDataset``: item ``i`` is step ``start + i``.

Keras' ``fit`` runs exactly ``len(dataset)`` steps on a finite ``PyDataset`` (it never
loops one), so the number of steps is exact whatever the dataset's length. The row
order is core's ``BatchSource`` (batch ``j`` = deterministic rows from
``(seed, epoch)``), not Keras' ``shuffle`` (Python's ``random``), so a resumed run
sees the same batches as an uninterrupted one: the data position is the step.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.jax.data import BatchSource

__all__ = ["make_step_dataset", "to_xy"]


def to_xy(batch: dict[str, Any]) -> tuple[Any, Any]:
    """A pipekit batch ``{"x": …, "y": …}`` as Keras' ``(x, y)``."""
    return batch["x"], batch["y"]


def make_step_dataset(keras: Any, source: BatchSource, start_step: int, num_steps: int) -> Any:
    """A ``PyDataset`` of ``num_steps`` batches: item ``i`` is ``source[start_step + i]``."""

    class StepDataset(keras.utils.PyDataset):
        def __init__(self) -> None:
            super().__init__(workers=1, use_multiprocessing=False, max_queue_size=10)

        def __len__(self) -> int:
            return num_steps

        def __getitem__(self, index: int) -> tuple[Any, Any]:
            if not 0 <= index < num_steps:
                raise IndexError(index)
            return to_xy(source[start_step + index])

    return StepDataset()
