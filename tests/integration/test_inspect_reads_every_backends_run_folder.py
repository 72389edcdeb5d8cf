"""`pipekit-train inspect DIR` lists the steps and meta of a real run folder of every store:
Equinox, Keras and numpyro-mcmc (Orbax step folders) and Lightning (torch step files).

Before, it read Orbax folders only, so a Lightning folder was "no checkpoints … expected
step folders" although its ``step-*.pt`` files were there. Each run is real and short;
``inspect`` runs as a subprocess, as a user runs it. Its wall time (interpreter start
included) is printed, not asserted: the target is under 2 s each (``pytest -s`` shows it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from pipekit_train import Checkpoint, TrainingLoop  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bayes"))
from _bayes_models import linreg, linreg_data  # noqa: E402

STEPS = 6


def _classes(n: int = 64) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return {"x": x, "y": (x[:, 0] > 0).astype(np.int32)}


def _equinox() -> dict[str, Any]:
    import equinox as eqx
    import jax

    return {"model_op": eqx.nn.MLP(4, 2, 8, 1, key=jax.random.PRNGKey(0))}


def _lightning() -> dict[str, Any]:
    import torch

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    data = _classes()
    data["y"] = data["y"].astype(np.int64)
    return {"model_op": net, "dataset": data, "backend_options": {"accelerator": "cpu"}}


def _keras() -> dict[str, Any]:
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(2)]
    )
    return {"model_op": model}


def _loop(backend: str, ckpt: Path) -> TrainingLoop:
    if backend == "numpyro-mcmc":
        from pipekit_train.adapters.bayes import NumpyroTask

        return TrainingLoop(
            task=NumpyroTask(model=linreg, num_warmup=10, num_samples=10),
            dataset=linreg_data(30),
            backend=backend,
            checkpoint_dir=str(ckpt),
            callbacks=[Checkpoint(every_n_steps=5)],
            log_every_n_steps=5,
        )
    kwargs: dict[str, Any] = {
        "dataset": _classes(),
        "loss": "cross_entropy",
        "batch_size": 16,
        "max_steps": STEPS,
        "log_every_n_steps": 2,
        "checkpoint_dir": str(ckpt),
        "callbacks": [Checkpoint(every_n_steps=2)],
        "backend": backend,
    }
    kwargs.update({"equinox": _equinox, "lightning": _lightning, "keras": _keras}[backend]())
    return TrainingLoop(**kwargs)


#: backend → (the steps its run checkpoints, the store kind inspect must report)
EXPECTED = {
    "equinox": ([2, 4, 6], "orbax"),
    "keras": ([2, 4, 6], "orbax"),
    "lightning": ([2, 4, 6], "torch-file"),
    # the end of warmup (10 steps), then every 5 draws
    "numpyro-mcmc": ([10, 15, 20], "orbax"),
}


def _inspect(*args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "pipekit_train.cli", "inspect", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc, time.perf_counter() - started


@pytest.mark.parametrize("backend", sorted(EXPECTED))
def test_inspect_lists_the_steps_and_meta_of_a_real_run(backend: str, tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = _loop(backend, ckpt).run()
    steps, kind = EXPECTED[backend]
    assert info["final_step"] == steps[-1]

    proc, seconds = _inspect(str(ckpt), "--json")
    print(f"\ninspect --json on a {backend} run folder ({len(steps)} steps): {seconds:.2f} s")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert [r["step"] for r in rows] == steps
    assert all(r["valid"] and r["error"] is None for r in rows), rows
    assert {r["store"] for r in rows} == {kind}
    meta = rows[-1]["meta"]
    assert meta["fingerprint"]["backend"] == backend
    assert meta["metrics"], meta
    if backend == "numpyro-mcmc":
        assert meta["phase"] == "sampling" and meta["fingerprint"]["num_samples"] == 10
    else:
        assert meta["data"]["position"] == steps[-1]
    assert all(r["size_bytes"] > 0 for r in rows)

    proc, seconds = _inspect(str(ckpt))
    print(f"inspect (table) on a {backend} run folder: {seconds:.2f} s")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["step", "valid", "size"]
    assert [ln.split()[:2] for ln in lines[1:]] == [[str(s), "yes"] for s in steps]
