"""Every named array of the dataset beyond ``x`` / ``y`` reaches the model as the keyword of
its name, and ``NumpyroTask.model_kwargs`` binds static hyper-parameters, on numpyro-svi,
numpyro-mcmc and blackjax's numpyro_task path (issue 25 item 2: before, a group index ``g``
in the dataset ran without a word and never reached the model). A name the model does not
take is a ``ConfigError`` naming it; the predictive op takes the array at new rows."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

# The shared models live beside the bayes tests; this test needs several backends.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bayes"))
from _bayes_models import groups, groups_data, linreg  # noqa: E402

TRUE = np.array([-1.0, 0.5, 2.0])

BACKENDS: dict[str, dict[str, Any]] = {
    "numpyro-svi": dict(
        max_steps=1500,
        batch_size=60,
        optimizer_config={"name": "adam", "lr": 0.05},
        log_every_n_steps=1500,
    ),
    "numpyro-mcmc": dict(backend_options={"steps_per_call": 200}),
    "blackjax": dict(backend_options={"steps_per_call": 200}),
}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_group_index_and_a_hyper_parameter_reach_the_model(backend: str) -> None:
    task = NumpyroTask(
        model=groups,
        num_warmup=200,
        num_samples=200,
        model_kwargs={"prior_scale": 3.0},
        predictive_samples=100,
    )
    loop = TrainingLoop(task=task, dataset=groups_data(), backend=backend, **BACKENDS[backend])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, _ = loop.run()
    a = op.samples["a"].mean(axis=0)
    np.testing.assert_allclose(a, TRUE, atol=0.1)
    assert np.all(op.samples["prior_scale"] == 3.0)
    pred = np.asarray(op(np.zeros((3, 1), np.float32), g=np.array([2, 0, 1], np.int32)))
    np.testing.assert_allclose(pred, TRUE[[2, 0, 1]], atol=0.15)


def test_a_named_array_the_model_does_not_take_names_it_before_compiling() -> None:
    rng = np.random.default_rng(0)
    data = {
        "x": rng.normal(size=(20, 2)).astype(np.float32),
        "y": rng.normal(size=20).astype(np.float32),
        "group": np.zeros(20, np.int32),
    }
    loop = TrainingLoop(task=NumpyroTask(model=linreg), dataset=data, backend="numpyro-mcmc")
    with pytest.raises(ConfigError, match="'group'.*group=None") as err:
        loop.run()
    assert err.value.field == "dataset"


def test_model_kwargs_must_be_json_keywords_the_model_takes() -> None:
    with pytest.raises(ConfigError, match="prior_sd") as err:
        NumpyroTask(model=groups, model_kwargs={"prior_sd": 1.0})
    assert err.value.field == "task.model_kwargs"
    with pytest.raises(ConfigError, match="JSON"):
        NumpyroTask(model=groups, model_kwargs={"prior_scale": object()})
    with pytest.raises(ConfigError, match="x, y: the data"):
        NumpyroTask(model=groups, model_kwargs={"y": 1.0})
