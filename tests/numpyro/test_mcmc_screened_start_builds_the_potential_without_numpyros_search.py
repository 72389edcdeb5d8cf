"""Given the screen's starts, numpyro-mcmc builds the model's potential itself
(``_potential.model_potential``) instead of letting ``kernel.init`` run NumPyro's
``initialize_model``, whose search for a start of its own is discarded for the starts given.

The initial ``HMCState`` is the same bits as ``kernel.init`` on the model (what
``MCMC.run(..., init_params=starts)`` calls) for a model with deterministic sites, one whose
support depends on another site's value, dense mass over vectorised chains, sequential
chains and the HMC kernel; a whole run never calls ``find_valid_initial_params``; a model
the potential path does not cover (a ``param`` site) keeps NumPyro's own path, and its
draws still equal ``MCMC.run``'s.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
import numpyro.infer.util as numpyro_util
import pytest
from _npy_helpers import mcmc_run_starts, pdb
from numpyro.infer import MCMC, NUTS

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.numpyro_mcmc._chain import ChainStep, init_model_key, make_kernel
from pipekit_train.adapters.numpyro_mcmc._options import parse_options
from pipekit_train.adapters.numpyro_mcmc._potential import checked_by_the_screen, model_potential
from pipekit_train.adapters.numpyro_mcmc._screened import screened_starts

SCHOOLS = "eight_schools-eight_schools_noncentered"


def bounded(y=None):
    """A support that depends on another site's value: NumPyro replays the model."""
    tau = numpyro.sample("tau", dist.HalfNormal(2.0))
    u = numpyro.sample("u", dist.Uniform(0.0, tau))
    numpyro.deterministic("ratio", u / tau)
    numpyro.sample("y", dist.Normal(u, 1.0), obs=y)


def with_param(y=None):
    """A ``param`` site: its value comes from initialize_model's trace, so NumPyro's path."""
    shift = numpyro.param("shift", 0.5)
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    numpyro.sample("y", dist.Normal(mu + shift, 1.0), obs=y)


def _bits(state) -> list[bytes]:
    return [np.asarray(leaf).tobytes() for leaf in jax.tree_util.tree_leaves(state)]


def _init_both(model, args, kwargs, chains, options):
    task = NumpyroTask(model=model, num_warmup=20, num_samples=10, num_chains=chains)
    opts = parse_options(options)
    starts = screened_starts(model, args, kwargs, 3, chains).starts
    assert starts is not None
    first = {k: v[0] for k, v in starts.items()}
    potential = model_potential(model, args, kwargs, first, init_model_key(3, task))
    assert potential is not None
    method = opts.chain_method
    ours = ChainStep(
        make_kernel(model, opts, potential),
        task,
        args,
        method,
        kwargs,
        postprocess=potential.postprocess_fn,
    )
    numpyros = ChainStep(make_kernel(model, opts), task, args, method, kwargs)
    with checked_by_the_screen():  # as the run initialises the kernel on this path
        got = ours.init(3, starts)
    want = numpyros.init(3, starts)
    return (ours, got), (numpyros, want)


@pytest.mark.parametrize(
    ("case", "chains", "options"),
    [
        ("schools", 1, {}),
        ("schools", 2, {"dense_mass": True}),
        ("schools", 2, {"chain_method": "sequential"}),
        ("schools", 1, {"kernel": "hmc", "num_steps": 5}),
        ("bounded", 1, {}),
        ("bounded", 3, {}),
    ],
)
def test_the_initial_state_and_draws_are_the_same_bits_as_kernel_init_on_the_model(
    case, chains, options
) -> None:
    with jax.enable_x64(True):
        if case == "schools":
            x, y = pdb.load_data(SCHOOLS)
            model, args = pdb.eight_schools, (jnp.asarray(x), jnp.asarray(y))
        else:
            model, args = bounded, (jnp.asarray(0.7),)
        (ours, got), (numpyros, want) = _init_both(model, args, {}, chains, options)
        assert _bits(got) == _bits(want)
        # The next transitions and the postprocessed draws (deterministic sites included).
        for _ in range(3):
            got, got_draw = ours.step(got)
            want, want_draw = numpyros.step(want)
        assert _bits(got) == _bits(want)
        assert set(got_draw["samples"]) == set(want_draw["samples"])
        assert _bits(got_draw) == _bits(want_draw)


def test_a_run_from_screened_starts_never_runs_numpyros_search(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("find_valid_initial_params ran")

    x, y = (a.astype(np.float32) for a in pdb.load_data(SCHOOLS))
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.eight_schools, num_warmup=20, num_samples=10),
        dataset=(x, y),
        backend="numpyro-mcmc",
        seed=2,
        backend_options={"x64": False},
    )
    monkeypatch.setattr(numpyro_util, "find_valid_initial_params", refuse)
    with pytest.warns(UserWarning):  # so few draws: the ESS warning
        op, info = loop.run()
    assert info["starts"] is not None and info["draws_collected"] == 10
    # With the search refused, NumPyro's own path fails: the check above can fail.
    kernel = NUTS(pdb.eight_schools)
    with pytest.raises(AssertionError, match="find_valid_initial_params ran"):
        kernel.init(jax.random.PRNGKey(0), 5, mcmc_run_starts(info), (x, y), {})


def test_a_model_with_a_param_site_keeps_numpyros_path_and_mcmc_runs_bits() -> None:
    y = np.asarray([0.3, 1.1, 0.8, 1.9], np.float32)
    with jax.enable_x64(False):
        args = (jnp.asarray(y),)
        starts = screened_starts(with_param, args, {}, 0, 1).starts
        assert starts is not None
        first = {k: v[0] for k, v in starts.items()}
        task = NumpyroTask(model=with_param, num_warmup=20, num_samples=10)
        assert model_potential(with_param, args, {}, first, init_model_key(0, task)) is None
    loop = TrainingLoop(
        task=NumpyroTask(model=with_param, num_warmup=20, num_samples=10),
        dataset={"y": y},
        backend="numpyro-mcmc",
        seed=0,
        backend_options={"x64": False},
    )
    with pytest.warns(UserWarning):
        op, info = loop.run()
    ref = MCMC(NUTS(with_param), num_warmup=20, num_samples=10, progress_bar=False)
    ref.run(jax.random.PRNGKey(0), y=y, init_params=mcmc_run_starts(info))
    want = ref.get_samples(group_by_chain=True)
    assert op.samples_by_chain["mu"].tobytes() == np.asarray(want["mu"]).tobytes()
