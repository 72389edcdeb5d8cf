"""``ConvergenceStop(rhat=1.01, ess_bulk=400)`` ends an eight-schools NUTS run on blackjax
well before its ``num_samples``, with every parameter's R-hat <= 1.01 reported — and the
returned draws, checked again with ArviZ, have it too."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _bjx_helpers import loop_for, pdb

from pipekit_train.adapters.bayes import ConvergenceStop, NumpyroTask, diagnostics
from pipekit_train.errors import ConfigError


def test_stops_early_with_rhat_reached() -> None:
    x, y = pdb.load_data("eight_schools-eight_schools_noncentered")
    task = NumpyroTask(model=pdb.eight_schools, num_warmup=300, num_samples=3000, num_chains=4)
    stop = ConvergenceStop(rhat=1.01, ess_bulk=400, every_n_steps=100, min_draws=200)
    loop = loop_for(
        task,
        "nuts",
        options={"target_accept": 0.9, "steps_per_call": 100},
        dataset=(x, y),
        callbacks=[stop],
        log_every_n_steps=100,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        op, info = loop.run()
    assert info["final_step"] < 300 + 3000, info["stop_reason"]
    assert info["stop_reason"].startswith("ConvergenceStop"), info["stop_reason"]
    assert stop.reached is not None and stop.reached["r_hat"] <= 1.01
    assert stop.reached["ess_bulk"] >= 400
    assert op.num_draws == info["final_step"] - 300 == stop.reached["draws_per_chain"]
    assert op.num_draws >= 200 and op.num_draws % 100 == 0
    sites = diagnostics(op.samples_by_chain)["sites"]
    assert max(float(np.max(s["r_hat"])) for s in sites.values()) <= 1.01


def test_bad_settings_are_config_errors() -> None:
    for kw, field in [
        ({"rhat": 0.9}, "rhat"),
        ({"every_n_steps": 0}, "every_n_steps"),
        ({"min_draws": 1.5}, "min_draws"),
    ]:
        with pytest.raises(ConfigError) as info:
            ConvergenceStop(**kw)
        assert info.value.field == f"callbacks.ConvergenceStop.{field}"
