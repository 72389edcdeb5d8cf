"""Ctrl-C, in a real subprocess: the first finishes the chunk in flight, checkpoints and
stops cleanly (saying so on stderr); a second one aborts at once with ``KeyboardInterrupt``."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent


def _start(step_seconds: float) -> subprocess.Popen[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    child = subprocess.Popen(
        [sys.executable, str(HERE / "_sigint_worker.py"), str(step_seconds)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "READY"
    time.sleep(0.3)
    return child


def test_first_ctrl_c_checkpoints_and_stops():
    child = _start(0.01)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    line = next(x for x in out.splitlines() if x.startswith("RESULT"))
    _, interrupted, final_step, saved = line.split(" ", 3)
    assert interrupted == "SIGINT"
    assert 0 < int(final_step) < 100_000
    assert saved == f"[{final_step}]"  # checkpointed exactly where it stopped
    assert "SIGINT received; checkpointing at the next step boundary" in err
    assert "press Ctrl-C again" in err


def test_second_ctrl_c_aborts():
    child = _start(1.0)  # one step takes a second: both Ctrl-Cs land inside it
    child.send_signal(signal.SIGINT)
    time.sleep(0.2)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert "ABORTED" in out and "RESULT" not in out, (out, err)
    assert child.returncode == 130
