"""A stream on numpyro-svi: every mistake is a ``PipekitError`` naming the field and the fix,
raised before SVI is initialised (nothing compiled) (issue 20).

- a ``grain.IterDataset`` or an iterator factory without ``backend_options.num_data`` (the
  ``N`` that scales each minibatch's likelihood, which a stream does not know);
- ``num_data`` that is not a positive integer, or that differs from map-style data's rows;
- a full batch of a stream (``batch_size >= num_data``), and ``shuffle`` next to a stream;
- a model without ``N`` on a stream: the fix offered is ``N``, or map-style data;
- a Grain dataset already batched by ``.batch(n)``, named with the fix;
- numpyro-mcmc, which samples the whole dataset, refuses a stream by name.
"""

from __future__ import annotations

import grain
import numpy as np
import pytest
from _npy_helpers import pdb

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError, DataError, PipekitError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 3)).astype(np.float32)
Y = (X @ np.ones(3)).astype(np.float32)
EXAMPLES = [{"x": X[i], "y": Y[i]} for i in range(40)]


def _stream():
    return grain.MapDataset.source(EXAMPLES).repeat().to_iter_dataset()


@pytest.fixture(autouse=True)
def no_compile(monkeypatch):
    """Fail the test if SVI or the sampler gets initialised (which compiles)."""
    import numpyro.infer

    from pipekit_train.adapters.numpyro_mcmc import _chain

    def boom(*a, **k):
        raise AssertionError("initialised (compiled) before the error was raised")

    monkeypatch.setattr(numpyro.infer.SVI, "init", boom)
    monkeypatch.setattr(_chain.ChainStep, "init", boom)


def _run(error, field=None, model=pdb.sblrc, **kw) -> str:
    base = dict(
        task=NumpyroTask(model=model, num_warmup=5, num_samples=5),
        dataset=_stream(),
        backend="numpyro-svi",
        batch_size=8,
        max_steps=5,
    )
    base.update(kw)
    if base["backend"] == "numpyro-mcmc":  # samples the whole data: no batch_size, max_steps
        base.pop("batch_size"), base.pop("max_steps")
    with pytest.raises(error) as info:
        TrainingLoop(**base).run()
    assert isinstance(info.value, PipekitError)
    if field is not None:
        assert info.value.field == field, info.value
    return str(info.value)


@pytest.mark.parametrize(
    "dataset", [_stream(), lambda: iter(EXAMPLES * 10)], ids=["grain", "factory"]
)
def test_a_stream_without_num_data_names_the_option(dataset) -> None:
    msg = _run(ConfigError, "backend_options.num_data", dataset=dataset)
    assert "has no length" in msg and "set backend_options.num_data" in msg


@pytest.mark.parametrize("value", [0, -3, 2.5, True, "40"])
def test_num_data_must_be_a_positive_integer(value) -> None:
    msg = _run(ConfigError, "backend_options.num_data", backend_options={"num_data": value})
    assert "positive integer" in msg


def test_num_data_that_contradicts_map_style_data_names_both() -> None:
    msg = _run(
        ConfigError, "backend_options.num_data", dataset=(X, Y), backend_options={"num_data": 50}
    )
    assert "num_data = 50" in msg and "40 rows" in msg


def test_a_full_batch_of_a_stream_is_refused() -> None:
    msg = _run(ConfigError, "batch_size", batch_size=40, backend_options={"num_data": 40})
    assert "full batch" in msg and "map-style" in msg


def test_shuffle_next_to_a_stream_names_both() -> None:
    msg = _run(
        ConfigError,
        "backend_options.shuffle",
        backend_options={"num_data": 40, "shuffle": False},
    )
    assert "contradicts TrainingLoop.dataset, a stream" in msg


def test_a_model_without_n_on_a_stream_offers_n_or_map_style_data() -> None:
    msg = _run(ConfigError, "task.model", model=pdb.eight_schools, backend_options={"num_data": 40})
    assert "N=None" in msg and "map-style" in msg and "set batch_size" not in msg


@pytest.mark.parametrize(
    "dataset",
    [
        grain.MapDataset.source(EXAMPLES).batch(8),
        grain.MapDataset.source(EXAMPLES).batch(8).repeat().to_iter_dataset(),
    ],
    ids=["map-batched", "iter-batched"],
)
@pytest.mark.parametrize("backend", ["numpyro-svi", "numpyro-mcmc"])
def test_a_prebatched_grain_dataset_is_named_with_the_fix(dataset, backend) -> None:
    options = {"num_data": 40} if backend == "numpyro-svi" else {}
    msg = _run(DataError, dataset=dataset, backend=backend, backend_options=options)
    assert "already batched by .batch(8)" in msg and "batch_size=8" in msg


def test_numpyro_mcmc_refuses_a_stream_by_name() -> None:
    msg = _run(DataError, dataset=_stream(), backend="numpyro-mcmc")
    assert "grain.IterDataset" in msg and "whole dataset" in msg and "numpyro-svi" in msg
