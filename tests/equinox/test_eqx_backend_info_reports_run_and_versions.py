"""``backend_info`` describes the run: backend, library and pipekit versions, devices, timing."""

from __future__ import annotations

import json
from importlib import metadata

import equinox
import jax
import optax
import pytest
from _eqx_helpers import make_data, run_loop, tiny_loop


def test_backend_info_of_a_fresh_run():
    _, info = run_loop(tiny_loop(max_steps=10, val_dataset=make_data(16, seed=1)))
    for key in (
        "backend",
        "versions",
        "devices",
        "total_seconds",
        "final_step",
        "final_metrics",
        "resumed_from_step",
    ):
        assert key in info, key
    assert info["backend"] == "equinox"
    versions = info["versions"]  # {distribution: version}, the shape of every backend
    assert versions["jax"] == jax.__version__
    assert versions["equinox"] == equinox.__version__
    assert versions["optax"] == optax.__version__
    assert info["devices"] == [str(d) for d in jax.devices()] and info["devices"]
    assert isinstance(info["total_seconds"], float) and info["total_seconds"] > 0
    assert info["final_step"] == 10
    assert info["resumed_from_step"] is None
    metrics = info["final_metrics"]
    assert {"loss", "lr", "val_loss", "val_accuracy"} <= set(metrics)
    assert all(isinstance(v, float) for v in metrics.values())
    assert metrics["lr"] == pytest.approx(1e-2)  # the live learning rate

    assert set(versions) >= {"pipekit-train-core", "pipekit-train-equinox"}
    for dist, version in versions.items():
        assert version == metadata.version(dist)
    assert info.get("stop_reason") is None


def test_backend_info_is_json_serialisable():
    _, info = run_loop(tiny_loop(max_steps=5))
    json.dumps(info)
