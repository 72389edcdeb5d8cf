"""Every bad ``backend_options`` value on ``numpyro-svi`` and ``numpyro-mcmc`` — numpyro-mcmc's
``init_values`` included (an unknown site, a wrong shape, a value outside the site's
support) — is a ``PipekitError`` naming the field, raised before JAX compiles anything, with
the files already in ``checkpoint_dir`` untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpyro
import numpyro.distributions as dist
import pytest
from case_ids import case_id
from compile_watch import assert_refused_before_compiling, compiles
from user_files import plant

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

RNG = np.random.default_rng(0)
X = RNG.normal(size=(24, 2)).astype(np.float32)
Y = (X @ np.array([1.0, -0.5]) + 0.3 * RNG.normal(size=24)).astype(np.float32)


def regression(x, y=None, N=None):
    """beta (2,) ~ Normal(0, 5); sigma ~ HalfNormal(1); p ~ Beta(2, 2) (a unit-interval site)."""
    beta = numpyro.sample("beta", dist.Normal(0.0, 5.0).expand([2]).to_event(1))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("p", dist.Beta(2.0, 2.0))
    with numpyro.plate("data", x.shape[0] if N is None else N, subsample_size=x.shape[0]):
        numpyro.sample("obs", dist.Normal(x @ beta, sigma), obs=y)


def _loop(backend: str, run_dir: Path, options: dict[str, Any]) -> TrainingLoop:
    kw: dict[str, Any] = {"batch_size": 8, "max_steps": 4} if backend == "numpyro-svi" else {}
    return TrainingLoop(
        task=NumpyroTask(model=regression, num_warmup=4, num_samples=4),
        dataset=(X, Y),
        backend=backend,
        checkpoint_dir=str(run_dir),
        backend_options=options,
        **kw,
    )


SVI = [
    ({"steps_per_cal": 5}, "backend_options.steps_per_cal", "did you mean 'steps_per_call'"),
    ({"steps_per_call": 0}, "backend_options.steps_per_call", "integer >= 1"),
    ({"worker_count": -2}, "backend_options.worker_count", "integer >= 0"),
    ({"shuffle": "no"}, "backend_options.shuffle", "true or false"),
    ({"x64": "true"}, "backend_options.x64", "true or false"),
    ({"resume": "yes"}, "backend_options.resume", "'force'"),
    ({"compilation_cache": 3}, "backend_options.compilation_cache", "folder"),
    ({"optimizer_id": 5}, "backend_options.optimizer_id", "non-empty string"),
    ({"kernel": "nuts"}, "backend_options.kernel", "numpyro-svi"),
    ({"init_values": {"sigma": 1.0}}, "backend_options.init_values", "unknown key"),
]

MCMC = [
    ({"kernel": "nutz"}, "backend_options.kernel", "did you mean 'nuts'"),
    ({"chain_method": "parallel"}, "backend_options.chain_method", "'vectorized'"),
    ({"target_accept": 1.5}, "backend_options.target_accept", "(0, 1)"),
    (
        {"target_accept_prob": 0.9, "target_accept": 0.8},
        "backend_options.target_accept",
        "two names",
    ),
    ({"max_tree_depth": 0}, "backend_options.max_tree_depth", "integer >= 1"),
    ({"step_size": 0.0}, "backend_options.step_size", "> 0"),
    ({"num_steps": 5}, "backend_options.num_steps", "kernel 'hmc' only"),
    ({"init_strategy": "medain"}, "backend_options.init_strategy", "did you mean 'median'"),
    ({"dense_mass": "yes"}, "backend_options.dense_mass", "site groups"),
    ({"resume": "always"}, "backend_options.resume", "'auto'"),
    ({"init_values": [1.0]}, "backend_options.init_values", "mapping"),
    ({"init_values": {"sigma": float("nan")}}, "backend_options.init_values.sigma", "finite"),
    ({"init_values": {"sigmaa": 1.0}}, "backend_options.init_values.sigmaa", "latent sites"),
    ({"init_values": {"beta": [0.0, 0.0, 0.0]}}, "backend_options.init_values.beta", "(2,)"),
    ({"init_values": {"sigma": -1.0}}, "backend_options.init_values.sigma", "support"),
    ({"init_values": {"p": 1.5}}, "backend_options.init_values.p", "[0, 1]"),
]


def _refused(backend: str, tmp_path: Path, options: dict, field: str, words: str) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = _loop(backend, run_dir, options)
    assert_refused_before_compiling(loop.run, ConfigError, field, words, run_dir)


@pytest.mark.parametrize(("options", "field", "words"), SVI, ids=[case_id(c[0]) for c in SVI])
def test_svi_refuses(tmp_path: Path, options: dict, field: str, words: str) -> None:
    _refused("numpyro-svi", tmp_path, options, field, words)


@pytest.mark.parametrize(("options", "field", "words"), MCMC, ids=[case_id(c[0]) for c in MCMC])
def test_mcmc_refuses(tmp_path: Path, options: dict, field: str, words: str) -> None:
    _refused("numpyro-mcmc", tmp_path, options, field, words)


def test_the_watch_sees_a_good_mcmc_run_compile(tmp_path: Path) -> None:
    loop = _loop("numpyro-mcmc", tmp_path / "good", {"init_values": {"sigma": 1.0, "p": 0.5}})
    with compiles() as seen:
        loop.run()
    assert seen
