"""A Lightning run prints neither Lightning's product tips ("💡 Tip: …") nor the ``LeafSpec``
deprecation raised inside Lightning's own code, unless ``PIPEKIT_TRAIN_LIBRARY_LOGS=1``.
A real subprocess: logging and warning filters are per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent

CHILD = """
import sys
sys.path.insert(0, {here!r})
from _lightning_helpers import loop
loop(max_steps=2).run()
print("DONE")
"""


@pytest.mark.parametrize("asked", [False, True], ids=["default", "library-logs"])
def test_tips_only_when_asked(asked) -> None:
    env = dict(os.environ)
    env.pop("PIPEKIT_TRAIN_LIBRARY_LOGS", None)
    if asked:
        env["PIPEKIT_TRAIN_LIBRARY_LOGS"] = "1"
    proc = subprocess.run(
        [sys.executable, "-c", CHILD.format(here=str(HERE))],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-3000:]
    output = proc.stdout + proc.stderr
    assert ("💡 Tip" in output) == asked, output[-3000:]
    if not asked:
        assert "LeafSpec" not in output, output[-3000:]
