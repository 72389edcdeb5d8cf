"""The sampling book's logistic regression samples with ``blackjax.rmh``; asked for
``sampler: rmh``, the backend refuses before compiling with a ``ConfigError`` naming
``backend_options.sampler``, the reason (rmh's proposal is a function that backend_options
cannot carry) and the way that works (``sampler 'nuts'`` on the same ``logdensity_fn``, which
``test_blackjax_sampling_book_logistic_regression_nuts_agrees_with_blackjax_run_directly``
runs). The light option specs that core's CLI preflight checks give the same refusal, before
BlackJAX is imported. A misspelt sampler still gets the list and the closest name.
"""

from __future__ import annotations

import pytest
from _bjx_examples import logistic_regression

from pipekit_train import TrainingLoop
from pipekit_train.adapters._blackjax_options import COMMON_SPECS
from pipekit_train.adapters.blackjax import BlackjaxTask
from pipekit_train.engine import parse_backend_options
from pipekit_train.errors import ConfigError


def _loop(sampler: str) -> TrainingLoop:
    logdensity_fn, w0 = logistic_regression()
    task = BlackjaxTask(logdensity_fn=logdensity_fn, init_position=w0, num_samples=10)
    return TrainingLoop(task=task, backend="blackjax", backend_options={"sampler": sampler})


def test_rmh_is_refused_naming_the_reason_and_nuts() -> None:
    with pytest.raises(ConfigError) as err:
        _loop("rmh").run()
    text = str(err.value)
    assert err.value.field == "backend_options.sampler"
    assert "'rmh' is not a sampler of the blackjax backend" in text
    assert "proposal as a function" in text  # the reason
    assert "sample the same logdensity_fn with sampler 'nuts'" in text  # the way that works


def test_the_preflight_gives_the_same_refusal() -> None:
    with pytest.raises(ConfigError, match="sampler 'nuts'") as err:
        parse_backend_options(
            {"sampler": "rmh"}, COMMON_SPECS, backend="blackjax", keep_unknown=True
        )
    assert err.value.field == "backend_options.sampler"


def test_a_misspelt_sampler_still_gets_the_list_and_the_closest_name() -> None:
    with pytest.raises(ConfigError, match=r"must be one of 'nuts', .*did you mean 'nuts'"):
        _loop("nutz").run()
