"""numpyro-svi on an iterator factory: a resume replays it, and refuses one that changed
(issue 20).

``dataset=make_iterator`` (a zero-argument function returning an endless iterator of single
examples) with ``backend_options.num_data``. Its iterator has no state to save, so a resume
calls the factory again and skips the batches already consumed (core's stream, as on
Equinox): 10 steps, then a rerun to 20, equal 20 steps in one go bit for bit. A factory
that yields other data on replay is a ``CheckpointError`` and the checkpoint is kept.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from _npy_helpers import pdb

from pipekit_train import Checkpoint, CheckpointError, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

RNG = np.random.default_rng(0)
X = RNG.normal(size=(48, 3)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5]) + 0.3 * RNG.normal(size=48)).astype(np.float32)


def _factory(seed: int):
    def make_iterator():
        rng = np.random.default_rng(seed)
        while True:  # an endless, seeded stream of single examples
            i = int(rng.integers(len(X)))
            yield X[i], Y[i]

    return make_iterator


def _run(factory, max_steps: int, ckpt: Path | None = None) -> dict:
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, predictive_samples=5),
        dataset=factory,
        backend="numpyro-svi",
        batch_size=8,
        max_steps=max_steps,
        seed=1,
        optimizer_config={"name": "adam", "lr": 0.05},
        checkpoint_dir=str(ckpt) if ckpt is not None else None,
        callbacks=[Checkpoint(every_n_steps=10)] if ckpt is not None else [],
        backend_options={"num_data": 48, "steps_per_call": 4},
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, info = loop.run()
    return info


def test_a_deterministic_factory_replays_to_the_same_bits(tmp_path: Path) -> None:
    straight = _run(_factory(1), 20)
    _run(_factory(1), 10, tmp_path / "ckpt")
    resumed = _run(_factory(1), 20, tmp_path / "ckpt")
    assert resumed["resumed_from_step"] == 10 and resumed["final_step"] == 20
    assert straight["params"].keys() == resumed["params"].keys()
    for key, value in straight["params"].items():
        assert value.tobytes() == resumed["params"][key].tobytes(), key


def test_a_factory_that_yields_other_data_on_replay_is_refused(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    _run(_factory(1), 10, ckpt)
    with pytest.raises(CheckpointError, match="not deterministic"):
        _run(_factory(2), 20, ckpt)
    assert sorted(p.name for p in ckpt.iterdir() if p.name.isdigit()) == ["10"]
