"""An op trained with ``accumulate_steps``, a schedule and ``ema_decay`` saves and reloads.

Its optimiser's learning rate is the backend's ``PerUpdateSchedule`` (a schedule counted
in updates), which Keras serialises into the ``.keras`` archive; ``KerasModelOp.load``
registers it, so a fresh process — which never trained — loads the archive in safe mode,
with the schedule restored, and predicts exactly what the trained op (the EMA weights)
predicted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop

LOAD = """
import sys, numpy as np
from pipekit_train.adapters.keras import KerasModelOp
op = KerasModelOp.load(sys.argv[1])
print(type(op.model.optimizer._learning_rate).__name__)
np.save(sys.argv[2], np.asarray(op(np.load(sys.argv[3]))))
"""


def test_fresh_process_loads_the_archive_and_predicts_the_same(tmp_path: Path) -> None:
    op, _ = TrainingLoop(
        model_op=mlp(hidden=8), dataset=digits(256), loss="cross_entropy", batch_size=32,
        max_steps=3, accumulate_steps=2, ema_decay=0.9, backend="keras",
        optimizer_config={"name": "adam", "lr": {"schedule": "cosine_decay", "init_value": 1e-2}},
    ).run()  # fmt: skip
    x = digits(8)["x"]
    np.save(tmp_path / "x.npy", x)
    op.save(tmp_path / "op")
    proc = subprocess.run(
        [sys.executable, "-c", LOAD, str(tmp_path / "op"), str(tmp_path / "y.npy"),
         str(tmp_path / "x.npy")],
        capture_output=True, text=True, timeout=120,
        env=dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "PerUpdateSchedule"
    assert np.load(tmp_path / "y.npy").tobytes() == np.asarray(op(x)).tobytes()
