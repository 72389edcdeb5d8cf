"""Every mistake the issue lists is a ``ConfigError`` (a ``PipekitError``) naming the field and
the fix, raised before JAX compiles anything (watched through ``jax.monitoring``)."""

from __future__ import annotations

import numpy as np
import pytest
from _bjx_helpers import (
    gauss_logdensity,
    gauss_task,
    loop_for,
    pdb,
    regression_data,
    regression_task,
)

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.blackjax import SAMPLERS, BlackjaxTask
from pipekit_train.errors import ConfigError, PipekitError

X, Y = regression_data()


@pytest.fixture
def no_compile():
    """Fail the test if XLA compiled (or fetched from the compilation cache) anything while it
    ran; abstract tracing (``jax.eval_shape``) is allowed."""
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


def _raises(loop, field: str, *words: str) -> str:
    with pytest.raises(ConfigError) as info:
        loop.run()
    assert isinstance(info.value, PipekitError)
    assert info.value.field == field, info.value
    msg = str(info.value)
    for w in words:
        assert w in msg, msg
    return msg


def test_both_logdensity_fn_and_numpyro_task() -> None:
    with pytest.raises(ConfigError, match="not both") as info:
        BlackjaxTask(
            logdensity_fn=gauss_logdensity,
            init_position=np.zeros(3),
            numpyro_task=NumpyroTask(model=pdb.eight_schools),
        )
    assert info.value.field == "task.logdensity_fn"


def test_neither_logdensity_fn_nor_numpyro_task() -> None:
    with pytest.raises(ConfigError, match="neither") as info:
        BlackjaxTask(init_position=np.zeros(3))
    assert info.value.field == "task.logdensity_fn"


def test_raw_logdensity_without_init_position() -> None:
    with pytest.raises(ConfigError) as info:
        BlackjaxTask(logdensity_fn=gauss_logdensity)
    assert info.value.field == "task.init_position"


def test_import_string_that_does_not_resolve() -> None:
    with pytest.raises(ConfigError, match="cannot import") as info:
        BlackjaxTask(logdensity_fn="no_such_module_here:logp", init_position=[0.0])
    assert info.value.field == "task.logdensity_fn"


def test_num_chains_below_one() -> None:
    with pytest.raises(ConfigError) as info:
        gauss_task(num_chains=0)
    assert info.value.field == "task.num_chains"


def test_unknown_sampler_lists_the_valid_ones(no_compile) -> None:
    msg = _raises(loop_for(gauss_task(), "nutz"), "backend_options.sampler", "did you mean")
    for name in SAMPLERS:
        assert name in msg
    assert set(SAMPLERS) == {"nuts", "hmc", "mclmc", "pathfinder", "sgld", "sghmc", "smc", "svgd"}


def test_parameter_of_another_sampler(no_compile) -> None:
    opts = {"num_integration_steps": 5}
    _raises(
        loop_for(gauss_task(), "nuts", options=opts),
        "backend_options.num_integration_steps",
        "not a parameter of sampler 'nuts'",
        "hmc",
    )
    _raises(
        loop_for(gauss_task(), "mclmc", options={"target_accept": 0.9}),
        "backend_options.target_accept",
        "nuts",
    )


def test_bad_parameter_value(no_compile) -> None:
    _raises(
        loop_for(gauss_task(), "nuts", options={"target_accept": 1.5}),
        "backend_options.target_accept",
        "(0, 1)",
    )


@pytest.mark.parametrize(
    ("sampler", "option", "value", "words"),
    [
        ("smc", "target_ess", 0.0, "(0, 1]"),
        ("smc", "target_ess", 1.5, "(0, 1]"),
        ("smc", "num_particles", 1, ">= 2"),
        ("smc", "max_tempering_steps", 0, ">= 1"),
        ("smc", "num_mcmc_steps", 0, ">= 1"),
        ("smc", "init_scale", -1.0, "positive"),
        ("svgd", "learning_rate", 0.0, "positive"),
        ("svgd", "num_updates", 0, ">= 1"),
    ],
)
def test_bad_particle_sampler_value(sampler, option, value, words, no_compile) -> None:
    loop = loop_for(gauss_task(), sampler, options={option: value})
    _raises(loop, f"backend_options.{option}", words)


def test_particle_sampler_unknown_parameter_lists_the_valid_ones(no_compile) -> None:
    msg = _raises(
        loop_for(gauss_task(), "smc", options={"num_updates": 5}),
        "backend_options.num_updates",
        "not a parameter of sampler 'smc'",
        "svgd",
    )
    for name in ("num_particles", "target_ess", "max_tempering_steps", "num_mcmc_steps"):
        assert name in msg
    msg = _raises(
        loop_for(gauss_task(), "svgd", options={"particles": 5}),
        "backend_options.particles",
        "not an option of blackjax",
    )
    for name in ("learning_rate", "num_updates", "init_scale"):
        assert name in msg


def test_svgd_with_fewer_than_two_particles(no_compile) -> None:
    _raises(loop_for(gauss_task(num_samples=1), "svgd"), "task.num_samples", ">= 2")


def test_init_position_that_does_not_fit_logdensity_fn(no_compile) -> None:
    def needs_three(p):
        return -0.5 * (p - np.ones(3)) @ (p - np.ones(3))

    task = BlackjaxTask(logdensity_fn=needs_three, init_position=np.zeros(5), num_warmup=5)
    _raises(loop_for(task), "task.init_position", "does not fit", "(5,)")


def test_mclmc_on_a_one_dimensional_target(no_compile) -> None:
    task = BlackjaxTask(logdensity_fn=lambda p: -0.5 * p @ p, init_position=np.zeros(1))
    _raises(loop_for(task, "mclmc"), "task.init_position", "at least 2 dimensions", "nuts")


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
def test_sg_sampler_without_a_dataset(sampler, no_compile) -> None:
    # A raw task needs no dataset to build the loop (task.needs_dataset), so the backend
    # refuses the minibatch samplers at run time, still before compiling.
    _raises(loop_for(regression_task(), sampler, dataset=None), "dataset", "minibatches")


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
def test_sg_sampler_with_batch_size_above_n(sampler, no_compile) -> None:
    loop = loop_for(regression_task(), sampler, dataset=(X, Y), batch_size=len(X) + 1)
    _raises(loop, "batch_size", "larger than")


def test_sg_sampler_without_loglik_fn(no_compile) -> None:
    loop = loop_for(gauss_task(), "sgld", dataset=(X, Y), batch_size=8)
    _raises(loop, "task.loglik_fn", "logprior_fn", "loglik_fn")


def test_a_task_of_another_kind(no_compile) -> None:
    _raises(loop_for(object()), "task", "BlackjaxTask")


def test_numpyro_task_with_a_wrong_predictive_site(no_compile) -> None:
    x, y = pdb.load_data("eight_schools-eight_schools_noncentered")
    task = NumpyroTask(model=pdb.eight_schools, predictive_site="y", num_warmup=5, num_samples=5)
    _raises(loop_for(task, dataset=(x, y)), "task.predictive_site", "'obs'")


def _model_without_n(x, y=None):
    import numpyro
    import numpyro.distributions as dist

    beta = numpyro.sample("beta", dist.Normal(0.0, 10.0).expand([x.shape[1]]).to_event(1))
    with numpyro.plate("data", x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, 0.5), obs=y)


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
def test_sg_sampler_on_a_numpyro_model_without_n(sampler, no_compile) -> None:
    # Its minibatch likelihood would count B rows, not N: refused, naming the fix.
    task = NumpyroTask(model=_model_without_n, num_warmup=5, num_samples=5)
    loop = loop_for(task, sampler, dataset=(X, Y), batch_size=8)
    _raises(loop, "task.model", "takes no N", "subsample_size", f"batch_size={len(X)}")


def test_sg_sampler_on_a_numpyro_model_without_a_dataset(no_compile) -> None:
    task = NumpyroTask(model=_model_without_n, num_warmup=5, num_samples=5)
    with pytest.raises(ConfigError) as info:
        loop_for(task, "sgld", dataset=None, batch_size=8).run()
    assert info.value.field == "dataset"


def _local_latent(x, y=None, N=None):
    """A per-row latent ``z`` in the plate the minibatches subsample."""
    import numpyro
    import numpyro.distributions as dist

    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    with numpyro.plate("data", x.shape[0] if N is None else N, subsample_size=x.shape[0]):
        z = numpyro.sample("z", dist.Normal(mu, 1.0))
        numpyro.sample("obs", dist.Normal(z + x[:, 0], 0.5), obs=y)


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
def test_sg_sampler_with_a_local_latent_in_the_minibatched_plate(sampler, no_compile) -> None:
    # The plate's random indices are not the batch's rows: each z would be fitted to other
    # rows' data (bayes.refuse_local_latents, shared with numpyro-svi).
    task = NumpyroTask(model=_local_latent, num_warmup=5, num_samples=5)
    loop = loop_for(task, sampler, dataset=(X, Y), batch_size=8)
    _raises(loop, "task.model", "['z']", "'data'", f"blackjax {sampler}", f"of {len(X)} rows")
