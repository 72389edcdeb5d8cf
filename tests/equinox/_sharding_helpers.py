"""Run ``_sharding_worker.py`` scenarios in a fresh interpreter with N CPU devices.

``XLA_FLAGS=--xla_force_host_platform_device_count=N`` must be set before JAX
starts, so every multi-device scenario runs in a subprocess; the pytest process
itself keeps its single device. The scenarios every 8-device test needs run in
ONE subprocess per pytest session (:func:`eight_device_results`), which keeps
the whole sharding suite well under two minutes on two cores.

Tolerance: data-parallel and model-parallel steps reduce gradients across
devices, which sums in another order than one device does, so parameters are
compared with ``np.testing.assert_allclose(rtol=RTOL, atol=ATOL)``. Measured
here after 40 adam steps (lr 1e-2) of a 4-8-3 MLP, batch 32: max |diff| 6e-8
(8-device data parallel and a 4 x 2 data x model mesh, each vs one device) and
1.2e-7 (8 devices to step 20, resumed on 2, vs 8 devices throughout); max
relative diff 5e-6, on small elements. ``atol=1e-6`` alone covers every element
with a margin of 8x or more; ``rtol=1e-5`` is there for larger values.
"""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _eqx_helpers import HERE, subprocess_env
from xla_env import xla_flags_with_devices

RTOL = 1e-5
ATOL = 1e-6
WORKER = HERE / "_sharding_worker.py"

MAX_STEPS = 40
STOP_AT = 20
DATA_MESH = [["data", 8]]
DATA_MODEL_MESH = [["data", 4], ["model", 2]]


def run_worker(
    devices: int, scenarios: list[dict[str, Any]], out_dir: Path, timeout: float = 300
) -> dict[str, Any]:
    """Run ``scenarios`` with ``devices`` CPU devices; return ``results.json`` (+ ``out_dir``)."""
    env = subprocess_env(XLA_FLAGS=xla_flags_with_devices(devices), JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = f"{HERE}:{env['PYTHONPATH']}"
    proc = subprocess.run(
        [sys.executable, str(WORKER), json.dumps(scenarios), str(out_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        cwd=HERE,
    )
    assert proc.returncode == 0, f"worker failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-6000:]}"
    results: dict[str, Any] = json.loads((out_dir / "results.json").read_text())
    assert results["device_count"] == devices, results["device_count"]
    results["out_dir"] = str(out_dir)
    return results


def params(results: dict[str, Any], name: str) -> list[np.ndarray]:
    """The trained leaves of scenario ``name``."""
    with np.load(Path(results["out_dir"]) / f"{name}.npz") as f:
        return [f[f"leaf_{i}"] for i in range(len(f.files))]


def assert_params_close(actual: list[np.ndarray], expected: list[np.ndarray]) -> float:
    """``assert_allclose`` leaf by leaf at the stated tolerance; returns the max |diff|."""
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert a.shape == e.shape and a.dtype == e.dtype, i
        np.testing.assert_allclose(a, e, rtol=RTOL, atol=ATOL, err_msg=f"leaf {i}")
    return max(float(np.max(np.abs(a - e))) for a, e in zip(actual, expected, strict=True))


def _scratch() -> Path:
    root = Path(tempfile.mkdtemp(prefix="pipekit-sharding-"))
    atexit.register(shutil.rmtree, root, True)
    return root


BAD_SCENARIOS: list[dict[str, Any]] = [
    # 36 rows per batch cannot be split over an 8-way data axis.
    {"name": "bad_batch_vs_data_axis", "kind": "bad", "mesh": DATA_MESH, "batch_size": 36},
    # data_pspec names an axis the mesh does not have (ShardingSpec construction).
    {"name": "bad_mesh_without_data_axis", "kind": "bad", "mesh": [["batch", 8]]},
    # rank 3: no leaf of the MLP (weights are rank 2) has that many axes.
    {
        "name": "bad_model_spec_rank",
        "kind": "bad",
        "mesh": DATA_MODEL_MESH,
        "model_pspec": [None, None, "model"],
    },
    # splits axis 0 in 2: the last layer's (3, 8) weight cannot be halved.
    {
        "name": "bad_model_spec_divisibility",
        "kind": "bad",
        "mesh": DATA_MODEL_MESH,
        "model_pspec": ["model"],
    },
    # rank 2 for batches whose 'y' is rank 1.
    {
        "name": "bad_data_spec_rank",
        "kind": "bad",
        "mesh": DATA_MODEL_MESH,
        "data_pspec": ["data", "model"],
    },
    # a generator: no __len__/__getitem__ (one process: a DataError from the data layer).
    {"name": "bad_streaming_dataset", "kind": "bad", "mesh": DATA_MESH, "dataset": "stream"},
]


@functools.cache
def eight_device_results() -> dict[str, Any]:
    """Every 8-device scenario of the suite, run once per session in one subprocess.

    - ``single``: no ShardingSpec (the default single-device path), 40 steps;
    - ``dp_k1`` / ``dp_k5``: 8-way data parallel, ``steps_per_call`` 1 and 5;
    - ``mp_k1``: a 4 x 2 ("data", "model") mesh, ``model_pspec=P(None, "model")``;
    - ``ckpt_leg1``: ``dp_k1`` with a checkpoint every 10 steps, stopped at step 20;
    - the bad inputs of :data:`BAD_SCENARIOS`.
    """
    root = _scratch()
    common = {"max_steps": MAX_STEPS, "batch_size": 32, "n": 128}
    scenarios = [
        {"name": "single", "mesh": None, **common},
        {"name": "dp_k1", "mesh": DATA_MESH, **common},
        {"name": "dp_k5", "mesh": DATA_MESH, "steps_per_call": 5, **common},
        {"name": "mp_k1", "mesh": DATA_MODEL_MESH, "model_pspec": [None, "model"], **common},
        {
            "name": "ckpt_leg1",
            "mesh": DATA_MESH,
            "checkpoint_dir": str(root / "ckpt"),
            "checkpoint_every": 10,
            "stop_at": STOP_AT,
            **common,
        },
        *BAD_SCENARIOS,
    ]
    return run_worker(8, scenarios, root / "out8")
