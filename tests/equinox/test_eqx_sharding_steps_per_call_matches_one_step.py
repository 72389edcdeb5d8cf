"""Under an 8-device ShardingSpec, ``steps_per_call=5`` gives the bits of ``steps_per_call=1``.

The fused path places each chunk of 5 stacked batches on ``P(None, 'data')``
(the step axis unsplit, each batch split 8 ways) and scans the same step, so the
result is bit-identical to one step per call, as it is without sharding.
"""

from __future__ import annotations

import numpy as np
from _sharding_helpers import eight_device_results, params


def test_steps_per_call_five_equals_one_under_sharding():
    results = eight_device_results()
    k1, k5 = params(results, "dp_k1"), params(results, "dp_k5")
    assert len(k1) == len(k5) == 4
    for i, (a, b) in enumerate(zip(k1, k5, strict=True)):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), f"leaf {i} differs"
    assert results["dp_k5"]["final_loss"] == results["dp_k1"]["final_loss"]


def test_fused_chunks_are_split_along_the_batch_axis():
    chunk = eight_device_results()["dp_k5"]["placed"]["chunk"]
    assert chunk["x"]["spec"] == "P(None, 'data')"
    assert chunk["x"]["shape"] == [5, 32, 4]
    assert chunk["x"]["shard_shapes"] == [[5, 4, 4]] * 8
    assert chunk["y"]["shard_shapes"] == [[5, 4]] * 8
    assert "batch" not in eight_device_results()["dp_k5"]["placed"]  # every call was fused
