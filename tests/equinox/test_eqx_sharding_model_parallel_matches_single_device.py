"""Uniform model-parallel on a 4 x 2 ("data", "model") mesh matches single-device training.

``model_pspec=P(None, "model")`` splits the input axis of both ``Linear`` weights
(shapes (8, 4) and (3, 8)) over the 2-device "model" axis, for the model and for
adam's moments alike; the biases are rank 1, lower than the spec's rank 2, so
they are replicated (the documented rule for a uniform spec). Each batch is split
4 ways over "data". Parameters match the single-device run of the same global
batches within ``rtol=1e-5, atol=1e-6`` (measured: max |diff| 6e-8).
"""

from __future__ import annotations

from _sharding_helpers import assert_params_close, eight_device_results, params


def test_model_parallel_params_match_single_device_within_tolerance():
    results = eight_device_results()
    diff = assert_params_close(params(results, "mp_k1"), params(results, "single"))
    assert diff < 1e-6


def test_weights_are_split_over_the_model_axis_and_biases_replicated():
    leaves = eight_device_results()["mp_k1"]["leaves"]
    weights = [leaf for leaf in leaves if len(leaf["shape"]) == 2]
    biases = [leaf for leaf in leaves if len(leaf["shape"]) == 1]
    assert [w["shape"] for w in weights] == [[8, 4], [3, 8]]
    for w in weights:
        assert w["spec"] == "P(None, 'model')" and not w["replicated"]
        rows, cols = w["shape"]
        assert w["shard_shapes"] == [[rows, cols // 2]] * 8
    for b in biases:
        assert b["spec"] == "P()" and b["replicated"]


def test_batches_are_split_over_the_data_axis_only():
    x = eight_device_results()["mp_k1"]["placed"]["batch"]["x"]
    assert x["spec"] == "P('data',)"
    assert x["shard_shapes"] == [[8, 4]] * 8  # 32 rows / 4, each pair of "model" devices alike
