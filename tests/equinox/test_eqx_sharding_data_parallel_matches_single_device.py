"""Training on an 8-device data-parallel mesh matches single-device training.

Both runs see the same global batches (32 rows, the same seed) for 40 adam
steps; the 8-device run splits each batch 8 ways and averages the gradients
across devices, which sums in another order than one device does. So the
parameters are compared at a stated float tolerance, not bit for bit:
``np.testing.assert_allclose(rtol=1e-5, atol=1e-6)`` (measured here: max |diff|
6e-8, max relative diff 3e-6). The runs happen in one subprocess with
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (see ``_sharding_helpers``).
"""

from __future__ import annotations

import numpy as np
from _sharding_helpers import ATOL, RTOL, assert_params_close, eight_device_results, params


def test_eight_device_params_match_single_device_within_tolerance():
    """``rtol=1e-5, atol=1e-6`` after 40 adam steps (cross-device reductions reorder sums)."""
    results = eight_device_results()
    assert results["single"]["sharding"] is None  # the default path, no ShardingSpec
    assert results["dp_k1"]["sharding"]["num_devices"] == 8
    assert results["dp_k1"]["final_step"] == results["single"]["final_step"] == 40
    diff = assert_params_close(params(results, "dp_k1"), params(results, "single"))
    assert diff < 1e-6
    # The trained op (whose leaves live on the mesh) predicts like the single-device one.
    np.testing.assert_allclose(
        results["dp_k1"]["prediction"], results["single"]["prediction"], rtol=RTOL, atol=ATOL
    )


def test_each_training_batch_is_split_over_the_eight_devices():
    """What ``Placement.batch`` handed to the compiled step: P('data'), 8 shards of 32/8 rows."""
    placed = eight_device_results()["dp_k1"]["placed"]["batch"]
    for key, trailing in (("x", [4]), ("y", [])):
        arr = placed[key]
        assert arr["sharding"] == "NamedSharding"
        assert arr["spec"] == "P('data',)"
        assert arr["shape"] == [32, *trailing]
        assert arr["num_devices"] == 8 and not arr["replicated"]
        assert arr["shard_shapes"] == [[4, *trailing]] * 8
    # The single-device path hands plain host batches to jit.
    assert eight_device_results()["single"]["placed"]["batch"]["x"]["sharding"] == "ndarray"


def test_trained_state_is_replicated_over_the_mesh():
    """Data parallel: every model leaf is a NamedSharding P() over all 8 devices."""
    leaves = eight_device_results()["dp_k1"]["leaves"]
    assert len(leaves) == 4  # two Linear layers: weight + bias each
    for leaf in leaves:
        assert leaf["sharding"] == "NamedSharding"
        assert leaf["spec"] == "P()"
        assert leaf["replicated"] and leaf["num_devices"] == 8
        assert leaf["shard_shapes"] == [leaf["shape"]] * 8


def test_backend_info_records_mesh_shape_and_specs():
    info = eight_device_results()["dp_k1"]["sharding"]
    assert info == {
        "mesh_shape": {"data": 8},
        "model_pspec": "P()",
        "data_pspec": "P('data',)",
        "num_devices": 8,
    }
    info = eight_device_results()["mp_k1"]["sharding"]
    assert info["mesh_shape"] == {"data": 4, "model": 2}
    assert info["model_pspec"] == "P(None, 'model')"
