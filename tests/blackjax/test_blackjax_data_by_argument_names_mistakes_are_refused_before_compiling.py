"""Data given to a NumPyro model by its argument names, wrongly, is a ``ConfigError`` on
``blackjax`` naming the field and the fix, raised before JAX compiles anything and with the
files in ``checkpoint_dir`` untouched: a name ``partially_pooled(at_bats, hits=None)`` does
not take (bayes' ``check_binds``, as numpyro-mcmc), and the by-name form on the minibatch
samplers sgld / sghmc, which batch rows of ``x`` (the arrays by name need not share rows),
naming the ``{'x': X, 'y': Y}`` form that works and the samplers that read the data whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _bjx_helpers import loop_for
from compile_watch import assert_refused_before_compiling
from upstream_numpyro_examples import baseball_data, partially_pooled
from user_files import plant

from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.errors import ConfigError

AT_BATS, HITS = baseball_data()


def _task() -> NumpyroTask:
    return NumpyroTask(model=partially_pooled, num_warmup=4, num_samples=4)


def test_a_name_the_model_does_not_take_is_named_with_the_fix(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = loop_for(
        _task(), "nuts", dataset={"at_bat": AT_BATS, "hits": HITS}, checkpoint_dir=str(run_dir)
    )
    assert_refused_before_compiling(
        loop.run, ConfigError, "dataset", "requires ['at_bats']; give them by name", run_dir
    )


@pytest.mark.parametrize("sampler", ["sgld", "sghmc"])
def test_minibatch_samplers_refuse_data_by_name_naming_the_form_that_works(
    tmp_path: Path, sampler: str
) -> None:
    run_dir = tmp_path / "run"
    plant(run_dir)
    loop = loop_for(
        _task(),
        sampler,
        dataset={"at_bats": AT_BATS, "hits": HITS},
        batch_size=6,
        checkpoint_dir=str(run_dir),
    )
    assert_refused_before_compiling(
        loop.run, ConfigError, "dataset", "give dataset={'x': X, 'y': Y}", run_dir
    )
    with pytest.raises(ConfigError, match=r"\['at_bats', 'hits'\].*nuts, hmc, mclmc"):
        loop.run()
