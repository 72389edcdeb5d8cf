"""BlackJAX's quickstart, handed to pipekit as docs/blackjax.md says (its ``logdensity`` lambda
and dict start in a ``BlackjaxTask``, ``sampler: nuts``), draws the posterior the quickstart's
own ``window_adaptation(blackjax.nuts, logdensity).run`` + ``lax.scan`` of
``blackjax.nuts(logdensity, **parameters).step`` draws: each site's mean within 3 combined
MCSE and its sd within 20 %.

Both runs are float64 and use 150 warmup + 300 draws of one chain; pipekit's keys are its own
(``fold_in(PRNGKey(seed), step)``), so the runs are independent and agree in MCSE units, not
bits (docs/blackjax.md promises bits only between pipekit's own chunkings and resumes).
"""

from __future__ import annotations

import numpy as np
from _bjx_direct import direct_nuts, mcse_gaps
from _bjx_examples import quickstart
from _bjx_helpers import compilation_cache_dir

from pipekit_train import TrainingLoop
from pipekit_train.adapters.blackjax import BlackjaxTask

WARMUP, DRAWS = 150, 300


def test_quickstart_nuts_agrees_with_blackjax_run_directly() -> None:
    logdensity, initial_position = quickstart()
    theirs = direct_nuts(logdensity, initial_position, seed=0, num_warmup=WARMUP, num_samples=DRAWS)

    task = BlackjaxTask(
        logdensity_fn=logdensity,
        init_position=initial_position,
        num_warmup=WARMUP,
        num_samples=DRAWS,
    )
    op, info = TrainingLoop(
        task=task,
        backend="blackjax",
        seed=0,
        backend_options={
            "sampler": "nuts",
            "steps_per_call": WARMUP,  # one compiled chunk per phase
            "compilation_cache": compilation_cache_dir(),
        },
    ).run()

    ours = op.samples_by_chain
    assert set(ours) == {"loc", "log_scale"}
    assert ours["loc"].shape == theirs["loc"].shape == (1, DRAWS)
    gaps = mcse_gaps(ours, theirs)
    for gap in gaps.values():
        assert gap["z"] < 3.0, gaps
        assert 0.8 < gap["sd_ratio"] < 1.25, gaps
    # The quickstart's point: loc and scale recovered (the data's own mean and sd).
    assert abs(float(np.mean(ours["loc"])) - 10.0) < 2.5
    assert abs(float(np.exp(np.mean(ours["log_scale"]))) - 20.0) < 2.0
