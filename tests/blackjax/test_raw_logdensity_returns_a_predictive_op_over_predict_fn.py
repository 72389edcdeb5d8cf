"""The raw path end to end: ``BlackjaxTask(logdensity_fn, init_position, predict_fn)`` built
from import strings (as YAML builds it) samples the target, and the returned
``NumpyroPredictiveOp`` predicts through ``predict_fn``, saves and loads back (no pickle)."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from _bjx_helpers import SCALES, loop_for

from pipekit_train.adapters.bayes import NumpyroPredictiveOp
from pipekit_train.adapters.blackjax import BlackjaxTask


def test_raw_task_samples_predicts_saves_and_loads(tmp_path: Path) -> None:
    task = BlackjaxTask(
        logdensity_fn="_bjx_helpers:gauss_logdensity",
        init_position=[0.0, 0.0, 0.0],
        predict_fn="_bjx_helpers:predict_linear",
        num_warmup=200,
        num_samples=300,
        num_chains=2,
        predictive_samples=100,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop_for(
            task, "nuts", options={"steps_per_call": 100}, log_every_n_steps=100
        ).run()
    draws = op.samples["position"]
    assert draws.shape == (600, 3)
    np.testing.assert_allclose(draws.mean(0), [1.0, -1.0, 0.5], atol=0.35)
    np.testing.assert_allclose(draws.std(0), SCALES, rtol=0.35)
    assert info["diagnostics"]["sites"]["position"]["r_hat"] is not None
    x = np.eye(3, dtype=np.float32)
    pred = np.asarray(op(x))
    assert pred.shape == (3,)
    assert np.asarray(op(x, draws=True)).shape == (100, 3)
    np.testing.assert_allclose(
        pred, draws[np.linspace(0, 599, 100).round().astype(int)].mean(0), rtol=1e-5
    )
    op.save(tmp_path / "op")
    back = NumpyroPredictiveOp.load(tmp_path / "op", trusted=True)
    np.testing.assert_array_equal(np.asarray(back(x)), pred)
    assert back.samples_by_chain["position"].tobytes() == op.samples_by_chain["position"].tobytes()
