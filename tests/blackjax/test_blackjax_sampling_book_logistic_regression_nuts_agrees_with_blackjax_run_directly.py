"""The sampling book's Bayesian logistic regression, its ``logdensity_fn(w, alpha=1.0)`` and
start ``w0`` handed to pipekit as they are, draws with ``sampler: nuts`` the posterior that
BlackJAX's own window adaptation + ``lax.scan`` of ``nuts.step`` draws from the same start:
each weight's mean within 3 combined MCSE and its sd within 20 % (150 warmup + 300 draws,
one chain, float64; independent keys, so MCSE units, not bits).

The book samples it with ``blackjax.rmh``, which this backend refuses by name
(``test_blackjax_rmh_is_refused_naming_why_and_the_nuts_that_samples_the_same_density``);
this is the way that refusal points to.
"""

from __future__ import annotations

import numpy as np
from _bjx_direct import direct_nuts, mcse_gaps
from _bjx_examples import logistic_regression
from _bjx_helpers import compilation_cache_dir

from pipekit_train import TrainingLoop
from pipekit_train.adapters.blackjax import BlackjaxTask

WARMUP, DRAWS = 150, 300


def test_logistic_regression_nuts_agrees_with_blackjax_run_directly() -> None:
    logdensity_fn, w0 = logistic_regression()
    theirs = direct_nuts(logdensity_fn, w0, seed=1, num_warmup=WARMUP, num_samples=DRAWS)

    task = BlackjaxTask(
        logdensity_fn=logdensity_fn, init_position=w0, num_warmup=WARMUP, num_samples=DRAWS
    )
    op, _ = TrainingLoop(
        task=task,
        backend="blackjax",
        seed=1,
        backend_options={
            "sampler": "nuts",
            "steps_per_call": WARMUP,  # one compiled chunk per phase
            "compilation_cache": compilation_cache_dir(),
        },
    ).run()

    ours = op.samples_by_chain
    assert ours["position"].shape == theirs["position"].shape == (1, DRAWS, 3)
    gaps = mcse_gaps(ours, theirs)
    assert len(gaps) == 3
    for gap in gaps.values():
        assert gap["z"] < 3.0, gaps
        assert 0.8 < gap["sd_ratio"] < 1.25, gaps
    # The book's clusters are separable along X0 and X1: both slopes clearly positive.
    assert np.all(ours["position"][0, :, 1:].mean(0) > 0.5)
