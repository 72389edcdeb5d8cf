"""`backend_options={"data_parallel": True}`: keras.distribution.DataParallel on CPU devices.

Simulated devices need ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` before JAX
starts, so each run is a subprocess (``_keras_data_parallel_worker.py``). The model is
built before ``run()`` (on one device); the backend lays its variables and the
optimiser's out over the mesh. 4 devices train to the same weights as 1, up to float
reduction order. ``PJRT_NPROC=16`` is set: on a loaded 2-core machine an 8-device
all-reduce was seen to hang without it (see packages/keras/README.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from xla_env import xla_flags_with_devices

WORKER = Path(__file__).with_name("_keras_data_parallel_worker.py")


def _run(
    tmp: Path, devices: int, data_parallel: bool, batch: int = 32, *more: str
) -> tuple[dict, Path]:
    out = tmp / f"dp-{devices}-{int(data_parallel)}-{len(more)}.npz"
    env = dict(
        os.environ,
        XLA_FLAGS=xla_flags_with_devices(devices),
        JAX_PLATFORMS="cpu",
        KERAS_BACKEND="jax",
        PJRT_NPROC="16",
    )
    proc = subprocess.run(
        [sys.executable, str(WORKER), str(out), "1" if data_parallel else "0", str(batch), *more],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=WORKER.parent,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), out


def test_four_devices_match_one_device(tmp_path: Path) -> None:
    single, single_out = _run(tmp_path, 1, False)
    multi, multi_out = _run(tmp_path, 4, True)
    assert single["distribution"] is None and single["devices"] == 1
    assert multi["distribution"] == "DataParallel" and multi["devices"] == 4
    assert multi["placed_on"] == [4], "every variable is replicated on the 4 devices"
    assert multi["logits_finite"]
    a, b = np.load(single_out), np.load(multi_out)
    assert a.files == b.files
    for key in a.files:
        np.testing.assert_allclose(b[key], a[key], rtol=2e-5, atol=2e-6, err_msg=key)
    for name in ("loss", "val_loss", "val_accuracy"):
        assert abs(multi["final_metrics"][name] - single["final_metrics"][name]) < 1e-4


def test_batch_not_divisible_by_the_devices_is_config_error(tmp_path: Path) -> None:
    result, _ = _run(tmp_path, 3, True, batch=32)
    assert result == {"error": "ConfigError", "field": "batch_size"}


def test_checkpoint_of_four_devices_resumes_on_one(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ckpt")
    first, _ = _run(tmp_path, 4, True, 32, "30", ckpt)
    assert first["final_step"] == 30 and first["resumed_from_step"] is None
    resumed, _ = _run(tmp_path, 1, False, 32, "40", ckpt)
    assert resumed["resumed_from_step"] == 30 and resumed["final_step"] == 40
