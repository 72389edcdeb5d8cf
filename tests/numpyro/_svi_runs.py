"""Running ``_svi_resume_worker.py`` in subprocesses: to the end, or SIGKILLed at a pause.

Used by the SVI resume test over a ``grain.IterDataset`` (map-style data is the contract kit's
SIGKILL check). Every process runs with the same ``PYTHONHASHSEED``: NumPyro's ``Trace_ELBO``
sums the sites' log-densities in the order of a Python ``set`` of site names, so under hash
randomisation two uninterrupted runs in fresh processes differ in the last bit of some
steps' losses (the params stay bit-identical);
``docs/decisions/0123-svi-losses-and-pythonhashseed.md`` records it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent
WORKER = HERE / "_svi_resume_worker.py"


def _cmd(tmp: Path, out: str, pause_at: int, data: str) -> list[str]:
    return [sys.executable, str(WORKER), str(tmp / "ckpt"), str(tmp / out), str(pause_at), data]


def _env() -> dict[str, str]:
    return dict(os.environ, JAX_PLATFORMS="cpu", PYTHONPATH=str(HERE), PYTHONHASHSEED="0")


def finish(tmp: Path, out: str, data: str = "map") -> dict:
    """Run the worker to its end; its JSON summary."""
    proc = subprocess.run(
        _cmd(tmp, out, 0, data), capture_output=True, text=True, timeout=300, env=_env()
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def committed(ckpt: Path) -> list[int]:
    """The committed checkpoint steps under ``ckpt``."""
    return sorted(int(p.name) for p in ckpt.iterdir() if p.name.isdigit()) if ckpt.is_dir() else []


def kill_when_paused(tmp: Path, out: str, pause_at: int, wait_for: int, data: str = "map") -> int:
    """Run the worker until it reports ``PAUSED``, wait for the ``wait_for`` commit, SIGKILL it."""
    proc = subprocess.Popen(
        _cmd(tmp, out, pause_at, data),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # blocks until the pause (or EOF if the worker died)
        assert line.strip() == f"PAUSED {pause_at}", line
        deadline = time.monotonic() + 60  # the async save finishes while it sleeps
        while wait_for not in committed(tmp / "ckpt") and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        return proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
