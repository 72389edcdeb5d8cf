"""A Grain dataset already batched by ``.batch(n)`` is a ``DataError`` naming it and the fix
(pass it unbatched, ``batch_size=n``) on every backend (issue 20) — map-style and iterable
alike — instead of each batch being read as one example (a 5-row "dataset" of 8-row
records). Needs Grain beside torch, so it lives here rather than in tests/lightning, whose
session has no Grain."""

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


def _model(x: Any, y: Any = None, N: Any = None) -> None:
    import numpyro
    import numpyro.distributions as dist

    w = numpyro.sample("w", dist.Normal(0.0, 1.0).expand([2]).to_event(1))
    with numpyro.plate("data", N or x.shape[0], subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ w, 1.0), obs=y)


def _loop(backend: str, dataset: Any) -> TrainingLoop:
    common: dict[str, Any] = dict(dataset=dataset, batch_size=8, max_steps=3)
    if backend == "equinox":
        import equinox as eqx
        import jax

        model = eqx.nn.MLP(2, 2, 4, 1, key=jax.random.PRNGKey(0))
        return TrainingLoop(model_op=model, loss="cross_entropy", backend=backend, **common)
    if backend == "keras":
        import keras

        model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(2)])
        return TrainingLoop(model_op=model, loss="cross_entropy", backend=backend, **common)
    if backend == "lightning":
        import torch

        model = torch.nn.Linear(2, 2)
        return TrainingLoop(model_op=model, loss="cross_entropy", backend=backend, **common)
    from pipekit_train.adapters.bayes import NumpyroTask

    task = NumpyroTask(model=_model, num_warmup=5, num_samples=5)
    if backend == "numpyro-mcmc":
        return TrainingLoop(task=task, dataset=dataset, backend=backend)
    if backend.startswith("blackjax"):
        sampler = backend.split(":")[1]
        options = {"sampler": sampler, **({"num_data": 40} if sampler == "sgld" else {})}
        return TrainingLoop(
            task=task, dataset=dataset, batch_size=8, backend="blackjax", backend_options=options
        )
    return TrainingLoop(task=task, backend=backend, backend_options={"num_data": 40}, **common)


@pytest.mark.parametrize("kind", ["map", "iter"], ids=["map-batched", "iter-batched"])
@pytest.mark.parametrize(
    "backend",
    [
        "equinox",
        "keras",
        "lightning",
        "numpyro-svi",
        "numpyro-mcmc",
        "blackjax:sgld",
        "blackjax:nuts",
    ],
)
def test_a_prebatched_grain_dataset_is_named_with_the_fix(backend: str, kind: str) -> None:
    batched = grain.MapDataset.source(EXAMPLES).batch(8)
    dataset = batched if kind == "map" else batched.repeat().to_iter_dataset()
    with pytest.raises(DataError, match=r"already batched by \.batch\(8\).*batch_size=8"):
        _loop(backend, dataset).run()
