"""numpyro-svi and numpyro-mcmc: a newest checkpoint with 8 bytes inverted (same size) is caught
by its checksum: a warning names the step, it is renamed ``<step>.corrupt``, the run resumes
from the step before and ends with the uninterrupted run's bits (SVI: the guide's params;
MCMC: every draw, the trace saved with the state included)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _npy_helpers import pdb
from checkpoint_damage import assert_flipped_newest_step_falls_back

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

# The tiny MCMC run is far from converged; its convergence warnings are not under test.
pytestmark = pytest.mark.filterwarnings("ignore:numpyro-mcmc:UserWarning")


def _svi_loop(ckpt: Path) -> TrainingLoop:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 5)).astype(np.float32)
    y = (x @ np.arange(1.0, 6.0) + 0.5 * rng.normal(size=80)).astype(np.float32)
    return TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, guide="AutoNormal", predictive_samples=10),
        dataset=(x, y),
        backend="numpyro-svi",
        batch_size=16,
        max_steps=30,
        seed=3,
        optimizer_config={"name": "adam", "lr": 0.01},
        log_every_n_steps=5,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10, keep_last=3)],
    )


def _mcmc_loop(ckpt: Path) -> TrainingLoop:
    x, y = (a.astype(np.float32) for a in pdb.load_data("eight_schools-eight_schools_noncentered"))
    return TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=10, num_samples=20, num_chains=2),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=11,
        backend_options={"target_accept": 0.9},
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10, keep_last=3)],
        log_every_n_steps=5,
    )


def _svi_params(op: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in info["params"].items()}


def _draws(op: Any, info: dict[str, Any]) -> dict[str, np.ndarray]:
    return {k: np.asarray(v) for k, v in op.samples_by_chain.items()}


@pytest.mark.parametrize(
    ("make_loop", "outputs"),
    [(_svi_loop, _svi_params), (_mcmc_loop, _draws)],
    ids=["numpyro-svi", "numpyro-mcmc"],
)
def test_bit_flip_in_the_newest_step_falls_back_to_the_previous_one(
    tmp_path: Path, make_loop: Any, outputs: Any
) -> None:
    assert_flipped_newest_step_falls_back(make_loop, tmp_path / "ckpt", outputs)
