"""`BatchSource.get_batches(start, k)` (one slice + one take) equals stacking `source[i]` for
each batch, for chunks inside an epoch, across one or several epoch boundaries, on every
process of a multi-process split, with and without shuffling, and for per-record sources."""

from __future__ import annotations

import numpy as np
import pytest

from pipekit_train.engine import BatchSource

N, B = 50, 8  # 6 batches an epoch, 2 rows dropped


def _data() -> dict[str, np.ndarray]:
    return {"x": np.arange(N * 3, dtype=np.float32).reshape(N, 3), "y": np.arange(N)}


class Records:
    def __len__(self) -> int:
        return N

    def __getitem__(self, i: int):
        d = _data()
        return {"x": d["x"][i], "y": d["y"][i]}


def _check(source: BatchSource, start: int, k: int) -> None:
    got = source.get_batches(start, k)
    for key in ("x", "y"):
        expected = np.stack([source[i][key] for i in range(start, start + k)])
        np.testing.assert_array_equal(got[key], expected)
        assert got[key].shape == (k, source.local_batch_size) + expected.shape[2:]


@pytest.mark.parametrize("shuffle", [True, False])
@pytest.mark.parametrize(
    ("start", "k"), [(0, 1), (0, 6), (2, 3), (4, 5), (5, 14), (17, 1), (30, 13)]
)
def test_single_process(shuffle: bool, start: int, k: int) -> None:
    _check(BatchSource(_data(), B, seed=3, shuffle=shuffle), start, k)


@pytest.mark.parametrize("process_index", [0, 1, 3])
def test_each_process_of_four(process_index: int) -> None:
    source = BatchSource(_data(), B, seed=3, process_index=process_index, process_count=4)
    for start, k in [(0, 6), (4, 9), (11, 20)]:
        _check(source, start, k)


def test_per_record_source() -> None:
    _check(BatchSource(Records(), B, seed=1), 4, 9)
