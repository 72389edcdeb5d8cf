"""Every user mistake on numpyro-mcmc / numpyro-svi is a ``PipekitError`` naming the field,
raised before the sampler or SVI is initialised (nothing compiled)."""

from __future__ import annotations

import numpy as np
import pytest
from _npy_helpers import pdb

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import CheckpointError, ConfigError, DataError, PipekitError

X, Y = (a.astype(np.float32) for a in pdb.load_data("eight_schools-eight_schools_noncentered"))
BACKENDS = ["numpyro-mcmc", "numpyro-svi"]


@pytest.fixture
def no_compile(monkeypatch):
    """Fail the test if the sampler or SVI gets initialised (which compiles)."""
    import numpyro.infer

    from pipekit_train.adapters.numpyro_mcmc import _chain

    def boom(*a, **k):
        raise AssertionError("initialised (compiled) before the error was raised")

    monkeypatch.setattr(_chain.ChainStep, "init", boom)
    monkeypatch.setattr(numpyro.infer.SVI, "init", boom)


def _loop(backend: str, **kw) -> TrainingLoop:
    base = dict(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=5, num_samples=5),
        dataset=(X, Y),
        backend=backend,
        batch_size=8,
        max_steps=5,
    )
    base.update(kw)
    if backend == "numpyro-mcmc":
        base.pop("batch_size"), base.pop("max_steps")
    return TrainingLoop(**base)


def _raises(error, loop, field=None, match=None):
    with pytest.raises(error, match=match) as info:
        loop.run()
    assert isinstance(info.value, PipekitError)
    if field is not None:
        assert info.value.field == field, info.value
    return str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_loss_instead_of_a_task(backend, no_compile) -> None:
    msg = _raises(ConfigError, _loop(backend, task=None, loss="mse"), "task")
    assert "NumpyroTask" in msg and "loss='mse'" in msg


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_task_of_another_backend(backend, no_compile) -> None:
    class Other:
        def loss_fn(self, *a):
            return 0.0, {}

    _raises(ConfigError, _loop(backend, task=Other()), "task", "NumpyroTask")


@pytest.mark.parametrize("backend", BACKENDS)
def test_predictive_site_not_in_the_model(backend, no_compile) -> None:
    task = NumpyroTask(model=pdb.eight_schools, predictive_site="y", num_warmup=5, num_samples=5)
    _raises(ConfigError, _loop(backend, task=task), "task.predictive_site", "'obs'")


@pytest.mark.parametrize("backend", BACKENDS)
def test_nan_in_the_data(backend, no_compile) -> None:
    y = Y.copy()
    y[2] = np.nan
    _raises(DataError, _loop(backend, dataset=(X, y)), match=r"dataset\['y'\].*row 2")


@pytest.mark.parametrize("backend", BACKENDS)
def test_unknown_backend_option(backend, no_compile) -> None:
    _raises(ConfigError, _loop(backend, backend_options={"x46": True}), "backend_options.x46")


@pytest.mark.parametrize("backend", BACKENDS)
def test_model_without_y_given_x_and_y_is_refused_before_compiling(no_compile, backend) -> None:
    # Any signature is a model (its data may come by its own argument names); the (x, y)
    # form that does not bind to it is the mistake, named before anything compiles.
    loop = _loop(backend, task=NumpyroTask(model=lambda x: None))
    _raises(ConfigError, loop, "dataset")


def test_bad_counts_fail_at_construction() -> None:
    for field in ("num_chains", "num_samples"):
        with pytest.raises(ConfigError) as err:
            NumpyroTask(model=pdb.eight_schools, **{field: 0})
        assert err.value.field == f"task.{field}"
    with pytest.raises(ConfigError, match="did you mean") as err:
        NumpyroTask(model=pdb.eight_schools, guide="AutoMultivariateNormall")
    assert err.value.field == "task.guide"


def test_mcmc_option_values(no_compile) -> None:
    for opts, field in [
        ({"target_accept": 1.5}, "backend_options.target_accept"),
        ({"kernel": "nutz"}, "backend_options.kernel"),
        ({"chain_method": "parallel"}, "backend_options.chain_method"),
        ({"num_steps": 10}, "backend_options.num_steps"),  # NUTS takes no num_steps
        ({"init_strategy": "zeros"}, "backend_options.init_strategy"),
        ({"x64": "yes"}, "backend_options.x64"),
    ]:
        _raises(ConfigError, _loop("numpyro-mcmc", backend_options=opts), field)


def test_svi_minibatches_need_a_model_with_n(no_compile) -> None:
    _raises(ConfigError, _loop("numpyro-svi", batch_size=4), "task.model", "subsample_size")


def test_mcmc_warns_about_fields_that_do_not_apply(tmp_path) -> None:
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=20, num_samples=20),
        dataset=(X, Y),
        backend="numpyro-mcmc",
        max_steps=7,
        batch_size=4,
        optimizer_config={"name": "sgd", "lr": 0.1},
    )
    with pytest.warns(UserWarning, match="max_steps.*batch_size.*optimizer_config"):
        _, info = loop.run()
    assert info["ignored_fields"] == ["max_steps", "batch_size", "optimizer_config"]
    assert info["final_step"] == 40


def test_checkpoint_dir_of_another_model_is_refused(tmp_path) -> None:
    import numpyro
    import numpyro.distributions as dist

    def other(x, y=None):
        mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
        with numpyro.plate("J", x.shape[0]):
            numpyro.sample("obs", dist.Normal(mu, x), obs=y)

    kw = dict(
        dataset=(X, Y),
        backend="numpyro-mcmc",
        checkpoint_dir=str(tmp_path / "ckpt"),
        callbacks=[Checkpoint(every_n_steps=5)],
    )
    with pytest.warns(UserWarning):
        TrainingLoop(
            task=NumpyroTask(model=pdb.eight_schools, num_warmup=5, num_samples=5), **kw
        ).run()
    with pytest.raises(CheckpointError, match="model"):
        TrainingLoop(task=NumpyroTask(model=other, num_warmup=5, num_samples=5), **kw).run()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("field", "value"),
    [("accumulate_steps", 4), ("ema_decay", 0.99), ("precision", "mixed-bfloat16")],
)
def test_training_features_it_cannot_honour_are_refused(backend, field, value, no_compile):
    msg = _raises(ConfigError, _loop(backend, **{field: value}), field)
    assert f"not supported by the {backend} backend" in msg


def test_svi_data_by_name_refuses_minibatches_and_an_x_y_val_dataset(no_compile) -> None:
    # Data given by the model's argument names is fitted whole (as SVI.run does): a
    # batch_size set below its rows, or a val_dataset in the (x, y) form, is named.
    from upstream_numpyro_examples import baseball_data, partially_pooled

    at_bats, hits = baseball_data()
    named = {"at_bats": at_bats, "hits": hits}
    task = NumpyroTask(model=partially_pooled)
    msg = _raises(ConfigError, _loop("numpyro-svi", task=task, dataset=named), "batch_size")
    assert "(x, y) form" in msg and "model(x, y=None, N=None)" in msg
    loop = _loop(
        "numpyro-svi",
        task=task,
        dataset=named,
        batch_size=32,
        val_dataset=(at_bats, hits),
        eval_every_n_steps=5,
    )
    assert "{'at_bats': ..., 'hits': ...}" in _raises(ConfigError, loop, "val_dataset")
