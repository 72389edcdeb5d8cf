"""A raw log density needs no ``TrainingLoop.dataset``; the paths that read data still ask for it.

``BlackjaxTask.needs_dataset`` is false on the raw path, so core's "dataset is required" check
lets the loop through; checkpoints (whose fingerprint names the data) work without one. A
``numpyro_task`` whose model takes data (an argument without a default) is conditioned on
it, so leaving it out is still a ``ConfigError`` naming ``dataset``, raised when the loop is
built (a model without data, NumPyro's funnel, runs without one:
``test_blackjax_nuts_on_the_funnel_without_a_dataset_agrees_with_numpyro_mcmc_run``).
"""

from __future__ import annotations

import numpy as np
import pytest
from _bjx_helpers import gauss_task, loop_for

from pipekit_train import Checkpoint
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError


def test_a_raw_task_samples_and_checkpoints_without_a_dataset(tmp_path) -> None:
    task = gauss_task(num_warmup=20, num_samples=30)
    assert task.needs_dataset is False
    loop = loop_for(
        task,
        dataset=None,
        checkpoint_dir=str(tmp_path),
        callbacks=[Checkpoint(every_n_steps=25)],
    )
    op, info = loop.run()
    assert op.samples["position"].shape == (30, 3)
    assert np.isfinite(op.samples["position"]).all()
    assert info["final_step"] == 50
    assert (tmp_path / "50").is_dir()

    again, info2 = loop_for(
        task, dataset=None, checkpoint_dir=str(tmp_path), callbacks=[Checkpoint(every_n_steps=25)]
    ).run()
    assert info2["resumed_from_step"] == 50
    np.testing.assert_array_equal(again.samples["position"], op.samples["position"])


def test_a_numpyro_task_without_a_dataset_is_refused_naming_it() -> None:
    def model(x, y=None):  # pragma: no cover - never traced
        raise AssertionError

    from pipekit_train.adapters.blackjax import BlackjaxTask

    task = BlackjaxTask(numpyro_task=NumpyroTask(model=model))
    assert task.needs_dataset is True
    with pytest.raises(ConfigError) as info:
        loop_for(task, dataset=None)
    assert info.value.field == "dataset"
