"""Grain worker processes for the batch order (the only Grain-specific part of the data layer).

The data layer itself — every accepted dataset form, its checks, the deterministic
order ``BatchSource`` / ``BatchIterator`` and ``eval_batches`` — is backend-neutral
and lives in :mod:`pipekit_train.engine` (numpy only). What stays here is
:class:`GrainBatchIterator`: the same batches, read by ``worker_count`` Grain worker
processes (``backend_options.worker_count`` of the Equinox and NumPyro SVI backends).

Why ``DEFAULT_WORKER_COUNT = 0``: chosen by measurement on a 2-core machine
(scripts/measure_data_engines.py): a spawned Grain worker takes 3-37 s to deliver its
first batch and then ~2.4-3 ms per batch over IPC, while the in-process gather takes
~20 µs.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.engine import BatchIterator, BatchSource
from pipekit_train.errors import ConfigError

__all__ = ["DEFAULT_WORKER_COUNT", "GrainBatchIterator"]

DEFAULT_WORKER_COUNT = 0


def _mark_flags_parsed() -> None:
    """Grain reads absl flags; outside ``absl.app.run`` they are unparsed."""
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()


class GrainBatchIterator(BatchIterator):
    """:class:`~pipekit_train.engine.BatchIterator` with an optional Grain worker pipeline.

    - ``worker_count == 0`` (default): exactly the engine's iterator (in-process gather).
    - ``worker_count > 0``: Grain's public dataset API,
      ``grain.MapDataset.source(source)[position:]`` prefetched by ``worker_count``
      worker processes (``IterDataset.mp_prefetch``); a restore rebuilds the pipeline
      from the new position. The batches and the state are the same as with 0.
    """

    def __init__(
        self,
        source: BatchSource,
        *,
        worker_count: int = DEFAULT_WORKER_COUNT,
        worker_buffer_size: int = 1,
    ) -> None:
        if isinstance(worker_count, bool) or not isinstance(worker_count, int) or worker_count < 0:
            raise ConfigError(
                f"backend_options.worker_count must be an integer >= 0, got {worker_count!r}.",
                field="backend_options.worker_count",
            )
        super().__init__(source)
        self.worker_count = worker_count
        self.worker_buffer_size = worker_buffer_size
        self._iterator: Any = None  # Grain's pipeline, started lazily at the current position
        if worker_count > 0:
            _mark_flags_parsed()

    def _reads_directly(self) -> bool:
        return self.worker_count == 0

    def _grain_iterator(self, start: int) -> Any:
        """Grain's multiprocess pipeline over the batch source, from batch ``start``."""
        import grain

        dataset = grain.MapDataset.source(self.source)[start:]
        iter_ds = dataset.to_iter_dataset(grain.ReadOptions(num_threads=0, prefetch_buffer_size=0))
        options = grain.MultiprocessingOptions(
            num_workers=self.worker_count, per_worker_buffer_size=self.worker_buffer_size
        )
        return iter(iter_ds.mp_prefetch(options))

    def _pipeline_next(self) -> Any:
        if self._iterator is None:
            self._iterator = self._grain_iterator(self.position)
        return next(self._iterator)

    def close(self) -> None:
        """Stop Grain's worker processes, if any."""
        iterator, self._iterator = self._iterator, None
        closer = getattr(iterator, "close", None)
        if callable(closer):
            closer()
