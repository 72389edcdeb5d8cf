"""Measure the batch-source engines: sklearn digits, batch 128 (basis of DEFAULT_WORKER_COUNT).

    python scripts/measure_data_engines.py            # in-process engines, interleaved, medians
    python scripts/measure_data_engines.py --workers 1 2

Prints µs per batch and batches/s for: in-memory slicing (the reference), BatchSource[i]
(the gather alone), BatchIterator direct, BatchIterator over grain.DataLoader (worker_count=0),
a plain grain.MapDataset.source(...).to_iter_dataset(...) iterator, the naive per-record
DataLoader + Batch pipeline, and with --workers the DataLoader with spawned worker processes
(time to the first batch and steady-state rate).
"""

from __future__ import annotations

import argparse
import statistics
import time

import grain
import numpy as np
from sklearn.datasets import load_digits

from pipekit_train.engine import BatchIterator, BatchSource
from pipekit_train.jax.data import GrainBatchIterator


def _digits() -> dict[str, np.ndarray]:
    d = load_digits()
    return {"x": d.data.astype(np.float32), "y": d.target.astype(np.int32)}


class _Slicing:
    """The reference: contiguous slices of a pre-shuffled in-memory copy."""

    def __init__(self, data: dict[str, np.ndarray], b: int) -> None:
        perm = np.random.default_rng(0).permutation(len(data["x"]))
        self.data = {k: v[perm] for k, v in data.items()}
        self.b, self.i, self.spe = b, 0, len(perm) // b

    def __next__(self) -> dict[str, np.ndarray]:
        j = (self.i % self.spe) * self.b
        self.i += 1
        return {k: v[j : j + self.b] for k, v in self.data.items()}


class _Records:
    def __init__(self, data: dict[str, np.ndarray]) -> None:
        self.data = data

    def __len__(self) -> int:
        return len(self.data["x"])

    def __getitem__(self, i: int) -> dict[str, np.ndarray]:
        return {k: v[i] for k, v in self.data.items()}

    def __repr__(self) -> str:
        return "Records"


def _rate(it, n: int) -> float:
    t = time.perf_counter()
    for _ in range(n):
        next(it)
    return (time.perf_counter() - t) / n * 1e6


def in_process(rounds: int = 7, n: int = 3000) -> None:
    data = _digits()
    src = BatchSource(data, 128, seed=0)
    no_threads = grain.ReadOptions(num_threads=0, prefetch_buffer_size=0)
    engines = {
        "in-memory slicing (reference)": _Slicing(data, 128),
        "BatchSource[i] (gather only)": map(src.__getitem__, range(len(src))),
        "BatchIterator direct": BatchIterator(src),
        "grain.MapDataset iterator": iter(grain.MapDataset.source(src).to_iter_dataset(no_threads)),
    }
    times: dict[str, list[float]] = {k: [] for k in engines}
    for _ in range(rounds):
        for name, it in engines.items():
            times[name].append(_rate(it, n))
    for name, ts in times.items():
        m = statistics.median(ts)
        print(f"{name:38s} {m:8.1f} µs/batch {1e6 / m:9.0f} batches/s")
    sampler = grain.samplers.IndexSampler(
        num_records=len(data["x"]), shuffle=True, seed=0, num_epochs=None
    )
    for label, ro in (("threads=0", no_threads), ("default ReadOptions", None)):
        naive = grain.DataLoader(
            data_source=_Records(data),
            sampler=sampler,
            operations=[grain.transforms.Batch(128, drop_remainder=True)],
            worker_count=0,
            read_options=ro,
        )
        m = _rate(iter(naive), 30)
        name = "naive per-record DataLoader " + label
        print(f"{name:38s} {m:8.1f} µs/batch {1e6 / m:9.0f} batches/s")


def workers(counts: list[int], n: int = 3000) -> None:
    src = BatchSource(_digits(), 128, seed=0)
    for w in counts:
        t = time.perf_counter()
        it = GrainBatchIterator(src, worker_count=w)
        it.next_batch()
        first = time.perf_counter() - t
        m = _rate(it, n)
        print(f"DataLoader worker_count={w}: first batch {first:.1f} s, ", end="")
        print(f"{m:.1f} µs/batch, {1e6 / m:.0f} batches/s")
        it.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="*", default=[])
    args = parser.parse_args()
    if args.workers:
        workers(args.workers)
    else:
        in_process()
