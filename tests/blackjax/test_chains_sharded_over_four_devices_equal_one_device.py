"""With several devices the chains are laid out over a one-axis ``chains`` mesh. On four
simulated CPU devices (``--xla_force_host_platform_device_count=4``, a real subprocess)
NUTS sampling gives the one-device draws bit for bit. Window adaptation agrees to float32
rounding only: XLA compiles the per-chain dual averaging (log / exp) for a batch of four
chains on one device and of one chain per device differently, and the last bit differs
(docs/decisions/0139-blackjax-chains-over-devices.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _bjx_helpers import compilation_cache_dir
from xla_env import xla_flags_with_devices

HERE = Path(__file__).parent


def _run(out: Path, devices: int) -> dict:
    env = dict(
        os.environ,
        JAX_PLATFORMS="cpu",
        PYTHONPATH=str(HERE),
        PIPEKIT_BJX_CACHE=compilation_cache_dir(),
    )
    env["XLA_FLAGS"] = xla_flags_with_devices(devices)
    proc = subprocess.run(
        [sys.executable, str(HERE / "_sharded_worker.py"), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_four_devices_shard_the_chains_and_give_the_same_draws(tmp_path: Path) -> None:
    assert _run(tmp_path / "four.npz", 4) == {"chain_devices": 4, "devices": 4}
    assert _run(tmp_path / "one.npz", 1) == {"chain_devices": 1, "devices": 1}
    four, one = np.load(tmp_path / "four.npz"), np.load(tmp_path / "one.npz")
    assert four["warmup0"].shape == (4, 20, 3)
    assert four["warmup0"].tobytes() == one["warmup0"].tobytes()
    # After 3 adaptation steps: the same draws up to float32 rounding (1e-7 measured).
    np.testing.assert_allclose(four["warmup3"][:, :5], one["warmup3"][:, :5], rtol=0, atol=1e-5)
