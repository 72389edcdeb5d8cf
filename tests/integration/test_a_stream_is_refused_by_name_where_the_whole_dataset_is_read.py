"""A stream (``grain.IterDataset`` or iterator factory) given to a backend that reads the
whole dataset — keras, numpyro-mcmc, blackjax's nuts — is a ``DataError`` saying so and
naming the backends that do read one (issue 20); before, every one of them said that only
the equinox backend reads streams."""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")  # before anything imports keras

import grain
import numpy as np
import pytest

from pipekit_train import TrainingLoop
from pipekit_train.errors import DataError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 2)).astype(np.float32)
Y = (X[:, 0] > 0).astype(np.int32)
EXAMPLES = [{"x": X[i], "y": Y[i]} for i in range(40)]


def _model(x: Any, y: Any = None) -> None:
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ w, 1.0), obs=y)


def _loop(backend: str, dataset: Any) -> TrainingLoop:
    if backend == "keras":
        import keras

        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
        return TrainingLoop(
            model_op=model,
            loss="cross_entropy",
            dataset=dataset,
            batch_size=8,
            max_steps=3,
            backend="keras",
        )
    from pipekit_train.adapters.bayes import NumpyroTask

    task = NumpyroTask(model=_model, num_warmup=5, num_samples=5)
    if backend == "numpyro-mcmc":
        return TrainingLoop(task=task, dataset=dataset, backend=backend)
    return TrainingLoop(
        task=task, dataset=dataset, backend="blackjax", backend_options={"sampler": "nuts"}
    )


@pytest.mark.parametrize("kind", ["grain", "factory"])
@pytest.mark.parametrize("backend", ["keras", "numpyro-mcmc", "blackjax:nuts"])
def test_a_stream_names_the_backends_that_read_one(backend: str, kind: str) -> None:
    if kind == "grain":
        dataset: Any = grain.MapDataset.source(EXAMPLES).repeat().to_iter_dataset()
    else:
        dataset = lambda: iter(EXAMPLES)  # noqa: E731
    with pytest.raises(DataError) as info:
        _loop(backend, dataset).run()
    msg = str(info.value)
    assert "reads the whole dataset" in msg and "numpyro-svi" in msg and "sgld" in msg
