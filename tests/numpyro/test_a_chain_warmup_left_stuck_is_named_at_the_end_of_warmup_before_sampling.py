"""A chain that warmup left stuck is named at the end of warmup, before any draw is taken
(``bayes.WarmupCheck``), so a user can stop a long run there instead of sampling it.

posteriordb's ARMA(1,1) from NumPyro's uniform starts at seed 0: chain 3 starts where the MA
recursion explodes and warmup shrinks its step size to ~1e-16 against the others' ~0.3-0.7.
The warning comes at the host event that ends warmup (a callback of the user's sees it at
the next event, the first of sampling), names the chain with its step size and log density
against the other chains', and gives the fix; screened starts (the default) give none.
"""

from __future__ import annotations

import re
import warnings

from _npy_helpers import pdb

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask
from pipekit_train.callbacks import Callback

ARMA = "arma-arma11"


class _SeenAt(Callback):
    """Records, at each host event, the phase and how many end-of-warmup warnings were out."""

    def __init__(self, caught: list) -> None:
        self.caught = caught
        self.seen: list[tuple[int, str, int]] = []

    def on_step_end(self, loop, state) -> None:
        n = sum("at the end of warmup" in str(w.message) for w in self.caught)
        self.seen.append((state.step, state.phase, n))


def _run(**options):
    x, y = pdb.load_data(ARMA)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        seen = _SeenAt(caught)
        loop = TrainingLoop(
            task=NumpyroTask(
                model=pdb.arma11, num_warmup=300, num_samples=200, num_chains=4, ordered=True
            ),
            dataset=(x, y),
            backend="numpyro-mcmc",
            seed=0,
            log_every_n_steps=100,
            callbacks=[seen],
            backend_options={"compilation_cache": "off", **options},
        )
        loop.run()
    return [str(w.message) for w in caught], seen.seen


def test_the_stuck_chain_is_named_when_warmup_ends_before_any_draw():
    caught, seen = _run(init_strategy="uniform")
    early = [c for c in caught if "at the end of warmup (step 300)" in c]
    assert len(early) == 1, caught
    (msg,) = early
    step = float(re.search(r"chain 3's step size is (\S+) at log density", msg).group(1))
    assert step < 1e-8, msg
    assert "chain 0" not in msg and "the other chains'" in msg and "init_values" in msg, msg
    # Said at the event that ends warmup: no event of the warmup phase saw it (the user's
    # callback runs before the check at the same event), the first sampling event did.
    assert [n for s, phase, n in seen if phase == "warmup"] == [0, 0, 0]
    first_sampling = next(n for s, phase, n in seen if phase == "sampling")
    assert first_sampling == 1, seen


def test_screened_starts_give_no_end_of_warmup_warning():
    caught, _ = _run()
    assert not any("at the end of warmup" in c for c in caught), caught
