"""eval_batches: the whole set in order, full batches then one partial batch."""

from __future__ import annotations

import numpy as np
from _data_helpers import toy_data

from pipekit_train.engine import eval_batches


def test_full_batches_then_one_partial():
    data = toy_data(23)
    batches = list(eval_batches(data, 10))
    assert [len(b["y"]) for b in batches] == [10, 10, 3]
    np.testing.assert_array_equal(np.concatenate([b["y"] for b in batches]), np.arange(23))
    np.testing.assert_array_equal(np.concatenate([b["x"] for b in batches]), data["x"])


def test_exact_multiple_has_no_empty_tail_and_tuples_work():
    data = toy_data(20)
    batches = list(eval_batches((data["x"], data["y"]), 10))
    assert [len(b["y"]) for b in batches] == [10, 10]
