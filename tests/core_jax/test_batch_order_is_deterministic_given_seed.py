"""The batch order is a pure function of (seed, epoch): the documented formula, every time."""

from __future__ import annotations

import numpy as np
from _data_helpers import assert_batches_equal, toy_data

from pipekit_train.engine import BatchSource


def test_same_seed_same_batches_and_the_documented_formula():
    data = toy_data(103)
    a, b = BatchSource(data, 10, seed=7), BatchSource(data, 10, seed=7)
    spe = 103 // 10
    for i in range(3 * spe):
        assert_batches_equal(a[i], b[i])
        epoch, j = divmod(i, spe)
        perm = np.random.default_rng([7, epoch]).permutation(103)
        np.testing.assert_array_equal(a[i]["y"], perm[j * 10 : (j + 1) * 10])
        np.testing.assert_array_equal(a[i]["x"], data["x"][perm[j * 10 : (j + 1) * 10]])


def test_different_seed_different_order_and_no_shuffle_is_identity():
    data = toy_data(103)
    assert not np.array_equal(
        BatchSource(data, 10, seed=1)[0]["y"], BatchSource(data, 10, seed=2)[0]["y"]
    )
    plain = BatchSource(data, 10, seed=1, shuffle=False)
    np.testing.assert_array_equal(plain[3]["y"], np.arange(30, 40))
    np.testing.assert_array_equal(plain[10]["y"], np.arange(0, 10))  # epoch 1 starts over
