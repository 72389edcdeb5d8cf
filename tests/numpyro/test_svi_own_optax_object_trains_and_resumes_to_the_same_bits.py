"""numpyro-svi takes the user's own optax object: it trains, logs its live lr, and resumes.

Issue 20: an ``inject_hyperparams`` adam on an exponential-decay schedule as
``optimizer_config``. A run checkpointed at step 20 and rerun to 40 ends with the
same guide parameters, bit for bit, as 40 steps in one go; a rerun with another
optax object is a ``CheckpointError`` naming ``optimizer_config``.
"""

from __future__ import annotations

import numpy as np
import optax
import pytest
from _npy_helpers import pdb

from pipekit_train import Checkpoint, CheckpointError, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

_rng = np.random.default_rng(0)
X = _rng.normal(size=(64, 5)).astype(np.float32)
Y = (X @ np.arange(1.0, 6.0) + 0.5 * _rng.normal(size=64)).astype(np.float32)


def _tx(rate: float = 0.05) -> optax.GradientTransformation:
    schedule = optax.exponential_decay(rate, transition_steps=10, decay_rate=0.5)
    return optax.inject_hyperparams(optax.adam)(learning_rate=schedule)


def _loop(max_steps: int, ckpt=None, tx=None) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, guide="AutoNormal", predictive_samples=20),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=16,
        max_steps=max_steps,
        optimizer_config=tx if tx is not None else _tx(),
        log_every_n_steps=10,
        checkpoint_dir=ckpt,
        callbacks=[Checkpoint(every_n_steps=20)] if ckpt else [],
        backend_options={"steps_per_call": 5},
    )


def test_optax_object_trains_logs_lr_and_resumes_bit_identically(tmp_path) -> None:
    _, straight = _loop(40).run()
    assert straight["optimizer"]["lr_logged"] is True
    # step 40's metric is read from the state 39 updates in: the schedule at 38
    expected = optax.exponential_decay(0.05, transition_steps=10, decay_rate=0.5)(38)
    np.testing.assert_allclose(straight["final_metrics"]["lr"], expected, rtol=1e-6)
    ckpt = str(tmp_path / "ckpt")
    _loop(20, ckpt).run()
    with pytest.raises(CheckpointError, match="optimizer_config"):
        _loop(40, ckpt, tx=optax.adam(0.05)).run()
    _, resumed = _loop(40, ckpt).run()
    assert resumed["resumed_from_step"] == 20 and resumed["final_step"] == 40
    assert straight["params"].keys() == resumed["params"].keys()
    for key, value in straight["params"].items():
        assert np.asarray(value).tobytes() == np.asarray(resumed["params"][key]).tobytes(), key
