"""A run with checkpoints prints none of Orbax's absl lines ("Skipping merge of OCDBT
checkpoints" at every save), unless ``PIPEKIT_TRAIN_LIBRARY_LOGS=1`` asks for every library
line. A real subprocess: logging is configured per process."""

from __future__ import annotations

import subprocess
import sys

import pytest
from _eqx_helpers import HERE, subprocess_env

CHILD = """
import sys
sys.path.insert(0, {here!r})
from _eqx_helpers import make_data, make_module
from pipekit_train import Checkpoint, TrainingLoop
TrainingLoop(
    model_op=make_module(), dataset=make_data(32), loss="cross_entropy", batch_size=16,
    max_steps=6, checkpoint_dir={ckpt!r}, callbacks=[Checkpoint(every_n_steps=2)],
).run()
print("DONE")
"""


@pytest.mark.parametrize("asked", [False, True], ids=["default", "library-logs"])
def test_orbax_absl_lines_only_when_asked(tmp_path, asked) -> None:
    env = subprocess_env(JAX_PLATFORMS="cpu")
    env.pop("PIPEKIT_TRAIN_LIBRARY_LOGS", None)
    if asked:
        env["PIPEKIT_TRAIN_LIBRARY_LOGS"] = "1"
    code = CHILD.format(here=str(HERE), ckpt=str(tmp_path / "ck"))
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert proc.returncode == 0 and "DONE" in proc.stdout, proc.stderr[-3000:]
    noisy = "Skipping merge of OCDBT checkpoints" in proc.stderr
    assert noisy == asked, proc.stderr[-3000:]
