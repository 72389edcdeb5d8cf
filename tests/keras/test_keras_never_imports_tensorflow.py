"""The keras backend trains without TensorFlow: not installed, never imported.

A fresh interpreter (with ``KERAS_BACKEND`` unset and an empty ``HOME``, so no
``~/.keras/keras.json`` steers it) imports the backend, trains a few steps, saves
and loads the trained model; ``tensorflow`` must never appear in ``sys.modules``.
The same interpreter shows that an unset ``KERAS_BACKEND`` was set to ``jax`` once,
with a warning.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

SCRIPT = r"""
import json, logging, os, sys
logging.basicConfig(level=logging.WARNING)
assert "KERAS_BACKEND" not in os.environ
import pipekit_train.adapters.keras as pk
import keras, numpy as np
from pipekit_train import TrainingLoop
m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3)])
rng = np.random.default_rng(0)
x, y = rng.normal(size=(64, 4)).astype("float32"), rng.integers(0, 3, 64).astype("int32")
data = {"x": x, "y": y}
op, info = TrainingLoop(model_op=m, dataset=data, loss="cross_entropy", batch_size=16,
                        max_steps=5, backend="keras").run()
op.save(sys.argv[1])
pk.KerasModelOp.load(sys.argv[1])
print(json.dumps({"backend": os.environ["KERAS_BACKEND"], "keras": keras.backend.backend(),
                  "tf": sorted(m for m in sys.modules if m.split(".")[0] == "tensorflow"),
                  "steps": info["final_step"]}))
"""


def test_tensorflow_is_not_installed() -> None:
    assert importlib.util.find_spec("tensorflow") is None
    with pytest.raises(metadata.PackageNotFoundError):
        metadata.distribution("tensorflow")


def test_training_and_saving_never_import_tensorflow(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "KERAS_BACKEND"}
    env.update(HOME=str(tmp_path), JAX_PLATFORMS="cpu")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "model.keras")],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out == {"backend": "jax", "keras": "jax", "tf": [], "steps": 5}
    assert proc.stderr.count("KERAS_BACKEND was unset") == 1, proc.stderr[-3000:]
