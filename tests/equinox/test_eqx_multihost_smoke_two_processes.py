"""``scripts/multihost_sharding_smoke.py`` passes: two real processes under ``jax.distributed``.

The script starts two processes on localhost (2 CPU devices each, one global
4-device mesh, gloo collectives) and a single-device reference process. Both
workers must hold identical parameters, equal to the reference within
``rtol=1e-5, atol=1e-6``, at step 20 (checkpointed into a shared directory and
stopped) and at step 30 (a new loop resumed from step 20); then ONE process with
2 devices resumes the two processes' step-30 checkpoint and matches the
reference at step 40. The multi-process bad inputs are ``ConfigError``s and
metrics are written by process 0 only.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from _eqx_helpers import REPO, subprocess_env

SCRIPT = REPO / "scripts" / "multihost_sharding_smoke.py"


@pytest.mark.timeout(400)
def test_two_process_smoke_passes(tmp_path):
    env = subprocess_env()
    for name in ("XLA_FLAGS", "JAX_COORDINATOR_ADDRESS"):
        env.pop(name, None)
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--workdir", str(tmp_path), "--timeout", "300"],
        capture_output=True,
        text=True,
        env=env,
        timeout=360,
    )
    report = proc.stdout + proc.stderr[-3000:]
    assert proc.returncode == 0, report
    assert "OK (" in proc.stdout, report
    assert proc.stdout.count("leg 2 resumed from 20 to 30") == 2, report
    assert "leg 3 (1 process, 2 devices): resumed from 30 to 40" in proc.stdout, report
    assert proc.stdout.count("identical True") == 2, report  # process 0 == process 1
    assert proc.stdout.count("atol=1e-06: ok") == 3, report
