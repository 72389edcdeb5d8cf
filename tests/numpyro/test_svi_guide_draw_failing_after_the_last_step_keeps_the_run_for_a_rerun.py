"""A numpyro-svi run whose guide draws fail after the last step never loses the run.

The model is written for inference only: ``y.shape`` sizes its plate, so it trains, but the
draws from the fitted guide (``Predictive``, called without the observations) fail. The run
raises ``FinishError`` naming that call and the cause, the final checkpoint stays committed,
and a rerun with the model fixed resumes from it: no steps run, and the op is built.
"""

from __future__ import annotations

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from _svi_runs import committed

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import FinishError

_rng = np.random.default_rng(1)
X = _rng.normal(size=40).astype(np.float32)
Y = (0.7 * X + 0.3 * _rng.normal(size=40)).astype(np.float32)


def _regression(sized_by_y: bool):
    def regression(x, y=None):
        w = numpyro.sample("w", dist.Normal(0.0, 1.0))
        n = y.shape[0] if sized_by_y else x.shape[0]  # y.shape: fails without observations
        with numpyro.plate("data", n):
            numpyro.sample("obs", dist.Normal(w * x, 0.3), obs=y)

    return regression  # both have one qualname: the rerun's fingerprint is the first run's


def _loop(model, ckpt) -> TrainingLoop:
    return TrainingLoop(
        task=NumpyroTask(model=model, predictive_samples=10),
        dataset=(X, Y),
        backend="numpyro-svi",
        batch_size=40,
        max_steps=20,
        optimizer_config={"name": "adam", "lr": 0.05},
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10)],
    )


def test_guide_draw_failure_keeps_the_final_checkpoint_and_a_rerun_builds_from_it(
    tmp_path,
) -> None:
    ckpt = tmp_path / "ckpt"
    with pytest.raises(FinishError) as err:
        _loop(_regression(sized_by_y=True), ckpt).run()
    msg = str(err.value)
    assert err.value.stage == "operator" and err.value.checkpoint_step == 20
    assert "Predictive drawing from the fitted guide" in msg and "AttributeError" in msg
    assert isinstance(err.value.__cause__, AttributeError)
    assert 20 in committed(ckpt)

    op, info = _loop(_regression(sized_by_y=False), ckpt).run()
    assert info["resumed_from_step"] == 20 and info["final_step"] == 20
    assert 20 in committed(ckpt)
    assert op.predictive_site == "obs" and op(X).shape == X.shape
