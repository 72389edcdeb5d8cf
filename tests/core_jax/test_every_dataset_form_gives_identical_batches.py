"""dict, (x, y) tuple, indexable of dicts / tuples: the same batches; a grain.MapDataset
gives the batches of its own order (Grain's ``.repeat().batch(B)``, issue 36 item 4)."""

from __future__ import annotations

import grain
import numpy as np
from _data_helpers import toy_data

from pipekit_train.engine import BatchIterator, BatchSource, RecordSource, normalize_dataset


class DictRecords:
    def __init__(self, data):
        self.data = data

    def __len__(self):
        return len(self.data["x"])

    def __getitem__(self, i):
        return {"x": self.data["x"][i], "y": self.data["y"][i]}


class TupleRecords(DictRecords):
    def __getitem__(self, i):
        return self.data["x"][i], self.data["y"][i]


def test_all_forms_agree():
    data = toy_data(53)
    forms = {
        "dict": data,
        "tuple": (data["x"], data["y"]),
        "lists": {"x": data["x"].tolist(), "y": data["y"].tolist()},
        "indexable-dicts": DictRecords(data),
        "indexable-tuples": TupleRecords(data),
        "list-of-dicts": [{"x": data["x"][i], "y": data["y"][i]} for i in range(53)],
    }
    iterators = {name: BatchIterator(BatchSource(f, 8, seed=9)) for name, f in forms.items()}
    reference = iterators.pop("dict")
    for _ in range(15):
        expected = reference.next_batch()
        for name, it in iterators.items():
            got = it.next_batch()
            got = {k: np.asarray(v, dtype=expected[k].dtype) for k, v in got.items()}
            assert got.keys() == expected.keys(), name
            for k in got:
                np.testing.assert_array_equal(got[k], expected[k], err_msg=f"{name}: {k}")
    pipeline = grain.MapDataset.source(DictRecords(data)).shuffle(seed=2)
    grain_batches = pipeline.repeat().batch(8)  # crosses the 53-row epoch: nothing dropped
    it = BatchIterator(BatchSource(pipeline, 8, seed=9))
    for i in range(15):
        got, want = it.next_batch(), grain_batches[i]
        for k in want:
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"grain batch {i}: {k}")
    chunk = BatchIterator(BatchSource(pipeline, 8, seed=9)).next_chunk(3)
    assert chunk["x"].shape == (3, 8, 3)
    np.testing.assert_array_equal(chunk["x"][2], grain_batches[2]["x"])


def test_normalized_kinds_and_extra_keys_travel_along():
    data = {**toy_data(20), "w": np.ones(20)}
    assert isinstance(normalize_dataset(DictRecords(data), "f"), RecordSource)
    batch = BatchSource(data, 4, seed=0)[0]
    assert set(batch) == {"x", "y", "w"} and batch["w"].shape == (4,)


def test_dict_records_may_list_their_keys_in_any_order():
    data = toy_data(20)

    class Shuffled(DictRecords):
        def __getitem__(self, i):
            record = {"x": self.data["x"][i], "y": self.data["y"][i]}
            return record if i % 2 else {"y": record["y"], "x": record["x"]}

    got = BatchSource(Shuffled(data), 4, seed=1)[2]
    expected = BatchSource(data, 4, seed=1)[2]
    np.testing.assert_array_equal(got["x"], expected["x"])
    np.testing.assert_array_equal(got["y"], expected["y"])
