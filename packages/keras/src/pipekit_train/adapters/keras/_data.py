"""Training data as a fixed-length ``keras.utils.PyDataset``: item ``i`` is step ``start + i``.

Keras' ``fit`` runs exactly ``len(dataset)`` steps on a finite ``PyDataset`` (it never
loops one), so the number of steps is exact whatever the dataset's length. The row
order is core's ``BatchSource`` (batch ``j`` = deterministic rows from
``(seed, epoch)``), not Keras' ``shuffle`` (Python's ``random``), so a resumed run
sees the same batches as an uninterrupted one: the data position is the step.

With ``accumulate_steps=k`` the source's records hold ``k * batch_size`` rows (one
optimiser update, as on the Equinox backend) and Keras gets ``k`` micro-batches per
record: micro-batch ``j`` is the rows ``j::k``. So ``batch_size=32, k=4`` reads the
same rows per update as ``batch_size=128``.

A model with several named inputs or outputs (the functional API's) takes ``x`` and ``y``
as dicts of arrays: :func:`flatten_nested` gives core one flat table (``"x:title"``,
``"y:priority"``, … and a row index under ``"x"``, the column core requires), so every
check, the row order and the resume position are core's; :func:`to_xy` nests each batch
again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from pipekit_train.engine import BatchSource

__all__ = ["flatten_nested", "make_step_dataset", "micro_batch", "to_xy"]

_SEP = ":"
_NESTED = ("x", "y")


def flatten_nested(dataset: Any) -> Any:
    """A dataset dict whose ``x`` or ``y`` is a dict of arrays as one flat dict; else as is."""
    if not isinstance(dataset, Mapping) or not any(
        isinstance(dataset.get(k), Mapping) for k in _NESTED
    ):
        return dataset
    flat: dict[str, Any] = {}
    for key, value in dataset.items():
        if key in _NESTED and isinstance(value, Mapping):
            flat.update({f"{key}{_SEP}{name}": column for name, column in value.items()})
        else:
            flat[str(key)] = value
    if "x" not in flat:
        first = next(iter(flat.values()))
        flat["x"] = np.arange(len(first))  # core's required column: the row index
    return flat


def to_xy(batch: dict[str, Any]) -> tuple[Any, Any]:
    """A pipekit batch ``{"x": …, "y": …}`` as Keras' ``(x, y)`` (dicts nested again)."""
    nested: dict[str, dict[str, Any]] = {}
    for key, value in batch.items():
        head, sep, name = key.partition(_SEP)
        if sep and head in _NESTED:
            nested.setdefault(head, {})[name] = value
    x = nested.get("x", batch.get("x"))
    y = nested.get("y", batch.get("y"))
    return x, y


def micro_batch(batch: dict[str, Any], j: int, k: int) -> dict[str, Any]:
    """Micro-batch ``j`` of ``k`` of one update's record (rows ``j::k``; the record if k=1)."""
    return batch if k == 1 else {name: value[j::k] for name, value in batch.items()}


def make_step_dataset(
    keras: Any, source: BatchSource, start_step: int, num_steps: int, accumulate: int = 1
) -> Any:
    """A ``PyDataset`` of ``num_steps * accumulate`` micro-batches.

    Item ``i`` is micro-batch ``i % accumulate`` of ``source[start_step + i // accumulate]``.
    """
    total = num_steps * accumulate

    class StepDataset(keras.utils.PyDataset):
        def __init__(self) -> None:
            super().__init__(workers=1, use_multiprocessing=False, max_queue_size=10)

        def __len__(self) -> int:
            return total

        def __getitem__(self, index: int) -> tuple[Any, Any]:
            if not 0 <= index < total:
                raise IndexError(index)
            step, j = divmod(index, accumulate)
            return to_xy(micro_batch(source[start_step + step], j, accumulate))

    return StepDataset()
