"""Sharding mistakes are ``ConfigError``s naming the field, raised before anything compiles.

The mesh-size cases run in the shared 8-device subprocess (``_sharding_helpers``),
which also records that no training step was traced or called. The
process-count cases run here, with ``jax.process_count`` monkeypatched to 2 on a
one-device mesh (the real two-process run is ``test_eqx_multihost_smoke_two_processes``).
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop, watch_compilation
from _sharding_helpers import eight_device_results
from jax.sharding import Mesh, PartitionSpec

from pipekit_train.adapters.equinox import ShardingSpec
from pipekit_train.adapters.equinox._sharding import validate_sharding
from pipekit_train.errors import ConfigError, DataError


def _bad(name: str) -> dict:
    result = eight_device_results()[name]
    assert result["trained"] is False, "a training step was traced or run"
    return result


def test_batch_size_not_divisible_by_the_data_axis():
    r = _bad("bad_batch_vs_data_axis")
    assert r["error"] == "ConfigError" and r["field"] == "batch_size"
    assert "(36)" in r["message"] and "data axis" in r["message"] and "(8)" in r["message"]


def test_mesh_without_the_data_axis_fails_at_sharding_spec_construction():
    r = _bad("bad_mesh_without_data_axis")
    assert r["error"] == "ConfigError" and r["field"] == "sharding.data_pspec"
    assert "'data'" in r["message"] and "('batch',)" in r["message"]


def test_model_spec_of_higher_rank_than_every_leaf():
    r = _bad("bad_model_spec_rank")
    assert r["error"] == "ConfigError" and r["field"] == "sharding.model_pspec"
    assert "rank 3" in r["message"]


def test_model_spec_that_does_not_divide_a_leaf():
    r = _bad("bad_model_spec_divisibility")
    assert r["error"] == "ConfigError" and r["field"] == "sharding.model_pspec"
    assert "(3, 8)" in r["message"] and "2 parts" in r["message"]


def test_data_spec_of_higher_rank_than_a_batch_field():
    r = _bad("bad_data_spec_rank")
    assert r["error"] == "ConfigError" and r["field"] == "sharding.data_pspec"
    assert "'y'" in r["message"]


def test_streaming_dataset_with_one_process_is_a_data_error():
    r = _bad("bad_streaming_dataset")
    assert r["error"] == "DataError" and "TrainingLoop.dataset" in r["message"]


# ----------------------------------------------------------------- several processes (patched)


def _one_device_spec() -> ShardingSpec:
    mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
    return ShardingSpec(mesh, PartitionSpec(), PartitionSpec("data"))


@pytest.fixture
def two_processes(monkeypatch):
    monkeypatch.setattr(jax, "process_count", lambda *a, **k: 2)
    monkeypatch.setattr(jax, "process_index", lambda *a, **k: 0)


def test_streaming_dataset_with_several_processes_is_a_config_error(two_processes, monkeypatch):
    rows = make_data(32)
    stream = ({"x": rows["x"][i], "y": rows["y"][i]} for i in range(32))
    loop = tiny_loop(dataset=stream, batch_size=16, sharding=_one_device_spec())
    with watch_compilation(monkeypatch) as watch, pytest.raises(ConfigError) as info:
        run_loop(loop)
    assert info.value.field == "dataset"
    assert "multi-process" in str(info.value) and "indexable" in str(info.value)
    assert not watch.anything


def test_batch_size_not_divisible_by_the_process_count(two_processes, monkeypatch):
    loop = tiny_loop(batch_size=15, sharding=_one_device_spec())
    with watch_compilation(monkeypatch) as watch, pytest.raises(ConfigError) as info:
        run_loop(loop)
    assert info.value.field == "batch_size"
    assert "(15)" in str(info.value) and "processes (2)" in str(info.value)
    assert not watch.anything


def test_data_axis_that_does_not_span_the_processes(two_processes):
    # One device on a data axis of size 1 cannot hold the batches of two processes.
    with pytest.raises(ConfigError) as info:
        validate_sharding(tiny_loop(batch_size=16), _one_device_spec())
    assert info.value.field == "sharding.data_pspec"
    assert "2 processes" in str(info.value)


def test_one_process_streaming_dataset_without_spec_is_still_a_data_error():
    rows = make_data(32)
    stream = ({"x": rows["x"][i], "y": rows["y"][i]} for i in range(32))
    with pytest.raises(DataError):
        run_loop(tiny_loop(dataset=stream, batch_size=16))
