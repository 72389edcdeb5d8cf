"""A stream on blackjax: every mistake is a ``PipekitError`` naming the field and the fix,
raised before JAX compiles anything (watched through ``jax.monitoring``) (issue 20).

- sgld / sghmc on a ``grain.IterDataset`` or an iterator factory without
  ``backend_options.num_data`` (the ``N`` BlackJAX's gradient estimator scales by);
- ``num_data`` that differs from map-style data's rows, a full batch of a stream;
- the samplers that read the whole dataset (nuts, …) refuse a stream and ``num_data``;
- a Grain dataset already batched by ``.batch(n)`` is named with the fix.
"""

from __future__ import annotations

import grain
import pytest
from _bjx_helpers import loop_for, regression_data, regression_task

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError, DataError, PipekitError

X, Y = regression_data()
EXAMPLES = [(X[i], Y[i]) for i in range(len(X))]


def _stream():
    return grain.MapDataset.source(EXAMPLES).repeat().to_iter_dataset()


@pytest.fixture(autouse=True)
def no_compile():
    """Fail the test if XLA compiled (or fetched from the compilation cache) anything."""
    import jax.monitoring as mon

    seen: list[str] = []

    def on_duration(name: str, secs: float, **kw) -> None:
        if "backend_compile" in name or "mlir" in name:
            seen.append(name)

    def on_event(name: str, **kw) -> None:
        if "cache_hit" in name:
            seen.append(name)

    mon.register_event_duration_secs_listener(on_duration)
    mon.register_event_listener(on_event)
    yield seen
    mon.unregister_event_duration_listener(on_duration)
    mon.unregister_event_listener(on_event)
    assert not seen, f"compiled before the error was raised: {seen}"


def _run(error, field, sampler="sgld", options=None, task=None, **kw) -> str:
    kw.setdefault("dataset", _stream())
    if sampler in ("sgld", "sghmc"):  # the others ignore (and warn about) batch_size
        kw.setdefault("batch_size", 16)
    loop = loop_for(task or regression_task(num_samples=5), sampler, options=options, **kw)
    with pytest.raises(error) as info:
        loop.run()
    assert isinstance(info.value, PipekitError)
    if field is not None:
        assert info.value.field == field, info.value
    return str(info.value)


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
@pytest.mark.parametrize("kind", ["grain", "factory"])
def test_a_stream_without_num_data_names_the_option(sampler, kind) -> None:
    dataset = _stream() if kind == "grain" else (lambda: iter(EXAMPLES * 10))
    msg = _run(ConfigError, "backend_options.num_data", sampler, dataset=dataset)
    assert "has no length" in msg and f"blackjax {sampler}" in msg


def test_num_data_that_contradicts_map_style_data_names_both() -> None:
    msg = _run(ConfigError, "backend_options.num_data", options={"num_data": 100}, dataset=(X, Y))
    assert "num_data = 100" in msg and f"{len(X)} rows" in msg


def test_a_full_batch_of_a_stream_is_refused() -> None:
    msg = _run(ConfigError, "batch_size", options={"num_data": len(X)}, batch_size=len(X))
    assert "full batch" in msg


def test_a_numpyro_model_without_n_on_a_stream_offers_n_or_map_style_data() -> None:
    from _bjx_helpers import pdb

    task = NumpyroTask(model=pdb.eight_schools, num_warmup=5, num_samples=5)
    msg = _run(ConfigError, "task.model", options={"num_data": len(X)}, task=task)
    assert "N=None" in msg and "map-style" in msg


def test_a_whole_data_sampler_refuses_a_stream_and_num_data() -> None:
    task = NumpyroTask(model=regression_model, num_warmup=5, num_samples=5)
    msg = _run(DataError, None, "nuts", task=task)
    assert "sampler 'nuts' reads the whole dataset" in msg and "sgld" in msg
    msg = _run(
        ConfigError, "backend_options.num_data", "nuts", {"num_data": 64}, task, dataset=(X, Y)
    )
    assert "reads the whole dataset" in msg


@pytest.mark.parametrize(
    "dataset",
    [
        grain.MapDataset.source(EXAMPLES).batch(8),
        grain.MapDataset.source(EXAMPLES).batch(8).repeat().to_iter_dataset(),
    ],
    ids=["map-batched", "iter-batched"],
)
@pytest.mark.parametrize("sampler", ["sgld", "nuts"])
def test_a_prebatched_grain_dataset_is_named_with_the_fix(dataset, sampler) -> None:
    task = NumpyroTask(model=regression_model, num_warmup=5, num_samples=5)
    options = {"num_data": len(X)} if sampler == "sgld" else {}
    msg = _run(DataError, None, sampler, options, task, dataset=dataset)
    assert "already batched by .batch(8)" in msg and "batch_size=8" in msg


def regression_model(x, y=None, N=None):
    import numpyro
    import numpyro.distributions as dist

    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([2]).to_event(1))
    with numpyro.plate("data", N or x.shape[0], subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, 0.5), obs=y)
