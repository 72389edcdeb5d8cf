"""numpyro-svi: fused steps equal single steps; a resumed run equals an uninterrupted one;
the checkpoint holds the SVIState; backend_info has the final ELBO; eval is the val ELBO."""

from __future__ import annotations

import functools

import numpy as np
from _npy_helpers import pdb

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroPredictiveOp, NumpyroTask

_rng = np.random.default_rng(0)
X = _rng.normal(size=(100, 5)).astype(np.float32)
Y = (X @ np.arange(1.0, 6.0) + 0.5 * _rng.normal(size=100)).astype(np.float32)


def _loop(max_steps: int, k: int, ckpt=None, **kw) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, guide="AutoNormal", predictive_samples=50),
        dataset=(X[:80], Y[:80]),
        val_dataset=(X[80:], Y[80:]),
        backend="numpyro-svi",
        batch_size=16,
        max_steps=max_steps,
        optimizer_config={"name": "adam", "lr": 0.01},
        log_every_n_steps=10,
        eval_every_n_steps=30,
        checkpoint_dir=ckpt,
        callbacks=[Checkpoint(every_n_steps=20)] if ckpt else [],
        backend_options={"steps_per_call": k},
        **kw,
    )


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k


def test_fused_equals_single_steps_and_resume_equals_straight(tmp_path) -> None:
    op1, one = _loop(60, 1).run()
    _, fused = _loop(60, 25).run()
    _same(one["params"], fused["params"])
    assert one["final_elbo"] == fused["final_elbo"] == -one["final_loss"]
    assert "val_elbo" in one["eval_metrics"] and np.isfinite(one["val_elbo"])
    assert isinstance(op1, NumpyroPredictiveOp) and op1.samples["beta"].shape == (50, 5)
    assert op1(X[80:]).shape == (20,)

    ckpt = str(tmp_path / "ckpt")
    _, first = _loop(40, 7, ckpt).run()
    assert first["final_step"] == 40
    _, resumed = _loop(60, 7, ckpt).run()
    assert resumed["resumed_from_step"] == 40 and resumed["final_step"] == 60
    _same(one["params"], resumed["params"])


def test_a_model_with_n_gets_the_full_size_bound() -> None:
    from pipekit_train.adapters.numpyro_svi import bind_data_size

    bound = bind_data_size(pdb.sblrc, 100, 10)
    assert isinstance(bound, functools.partial) and bound.keywords == {"N": 100}
    assert bind_data_size(pdb.eight_schools, 8, 8) is pdb.eight_schools
