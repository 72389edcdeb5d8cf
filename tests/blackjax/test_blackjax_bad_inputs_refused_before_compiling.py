"""Every bad ``backend_options`` value on ``blackjax`` — ``init_values`` included (checked by
the same bayes code as numpyro-mcmc) — is a ``PipekitError`` naming the field, raised before
JAX compiles anything, with the files already in ``checkpoint_dir`` untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from _bjx_helpers import gauss_task, loop_for, regression_data
from _bjx_helpers import numpyro_regression as regression
from compile_watch import assert_refused_before_compiling, compiles
from user_files import plant

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.adapters.blackjax import BlackjaxTask
from pipekit_train.errors import ConfigError

X, Y = regression_data()


def _numpyro_task() -> BlackjaxTask:
    return BlackjaxTask(numpyro_task=NumpyroTask(model=regression, num_warmup=4, num_samples=4))


# (sampler, options, NumPyro task?, field, words)
CASES = [
    ("nutz", {}, False, "backend_options.sampler", "did you mean 'nuts'"),
    ("nuts", {"num_integration_steps": 5}, False, "backend_options.num_integration_steps", "hmc"),
    ("nuts", {"target_accept": 1.5}, False, "backend_options.target_accept", "(0, 1)"),
    (
        "nuts",
        {"max_num_doublings": 4, "max_tree_depth": 6},
        False,
        "backend_options.max_tree_depth",
        "two names",
    ),
    ("nuts", {"warm_start": "pf"}, False, "backend_options.warm_start", "'pathfinder'"),
    ("nuts", {"steps_per_call": 0}, False, "backend_options.steps_per_call", ">= 1"),
    ("nuts", {"init_jitter": -1.0}, False, "backend_options.init_jitter", ">= 0"),
    ("nuts", {"resume": "maybe"}, False, "backend_options.resume", "'never'"),
    ("nuts", {"x64": "yes"}, False, "backend_options.x64", "true or false"),
    ("sgld", {"shuffle": 0}, False, "backend_options.shuffle", "true or false"),
    ("nuts", {"stepsize": 0.1}, False, "backend_options.stepsize", "did you mean 'step_size'"),
    ("nuts", {"init_values": {}}, True, "backend_options.init_values", "non-empty"),
    ("nuts", {"init_values": {"position": [0.0]}}, False, "backend_options.init_values", "raw"),
    ("nuts", {"init_values": {"sigmaa": 1.0}}, True, "backend_options.init_values.sigmaa", "sigma"),
    ("nuts", {"init_values": {"beta": [0.0]}}, True, "backend_options.init_values.beta", "shape"),
    (
        "nuts",
        {"init_values": {"sigma": -1.0}},
        True,
        "backend_options.init_values.sigma",
        "support",
    ),
]


@pytest.mark.parametrize(
    ("sampler", "options", "numpyro_task", "field", "words"),
    CASES,
    ids=[f"{c[0]}-{c[1]}" for c in CASES],
)
def test_refused(
    tmp_path: Path, sampler: str, options: dict, numpyro_task: bool, field: str, words: str
) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    task = _numpyro_task() if numpyro_task else gauss_task()
    extra = {"batch_size": 16, "dataset": (X, Y)} if sampler == "sgld" else {}
    loop = loop_for(task, sampler, options=options, checkpoint_dir=str(run_dir), **extra)
    assert_refused_before_compiling(loop.run, ConfigError, field, words, run_dir)


def test_the_watch_sees_a_good_run_compile(tmp_path: Path) -> None:
    loop = loop_for(_numpyro_task(), "nuts", options={"init_values": {"sigma": 1.0}})
    with compiles() as seen:
        loop.run()
    assert seen
