"""NumPyro's ``baseball.py`` partially pooled model, ``partially_pooled(at_bats, hits=None)``,
given to the blackjax backend as ``dataset={"at_bats": ..., "hits": ...}`` (the model's own
argument names, as numpyro-mcmc takes it), draws with ``sampler: nuts`` the posterior that
the example's own ``MCMC(NUTS(partially_pooled)).run(key, at_bats, hits=hits)`` draws.

Both runs are float32, 200 warmup + 400 draws of one chain; pipekit's keys are its own, so
the runs are independent and agree in MCSE units, not bits: every one of the 20 scalar
parameters' means within 3.5 combined MCSE (3 per parameter, as the quickstart's test, is
crossed by chance about once in 20 seeds with 20 parameters; 3.5 Bonferroni-style), and its
sd within 20 %. ``kappa`` (a Pareto prior) is compared as ``log kappa``: its sd is set by a
tail a few hundred draws do not pin down (measured ratios 0.64-0.79 between NumPyro and
pipekit seeds), that of its log is (0.90-1.16). The observed site is the model's own
(``obs``, found by its ``obs=``) and the op predicts from the model's inputs by name.
"""

from __future__ import annotations

import jax
import numpy as np
from _bjx_direct import mcse_gaps
from _bjx_helpers import compilation_cache_dir
from numpyro.infer import MCMC, NUTS
from upstream_numpyro_examples import baseball_data, partially_pooled

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

AT_BATS, HITS = baseball_data()
WARMUP, DRAWS = 200, 400


def _log_kappa(draws: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    out = {k: np.asarray(v) for k, v in draws.items() if k != "kappa"}
    out["log_kappa"] = np.log(np.asarray(draws["kappa"]))
    return out


def test_baseball_by_argument_names_on_blackjax_nuts_agrees_with_mcmc_run() -> None:
    op, info = TrainingLoop(
        task=NumpyroTask(model=partially_pooled, num_warmup=WARMUP, num_samples=DRAWS),
        dataset={"at_bats": AT_BATS, "hits": HITS},
        backend="blackjax",
        seed=0,
        backend_options={
            "sampler": "nuts",
            "x64": False,  # MCMC.run below runs in the process default
            "steps_per_call": DRAWS,  # one compiled chunk per phase
            "compilation_cache": compilation_cache_dir(),
        },
    ).run()
    ref = MCMC(NUTS(partially_pooled), num_warmup=WARMUP, num_samples=DRAWS, progress_bar=False)
    ref.run(jax.random.PRNGKey(0), AT_BATS, hits=HITS)
    theirs = ref.get_samples(group_by_chain=True)

    assert set(op.samples_by_chain) == set(theirs) == {"m", "kappa", "phi"}
    assert op.samples_by_chain["phi"].shape == (1, DRAWS, len(AT_BATS))
    gaps = mcse_gaps(_log_kappa(op.samples_by_chain), _log_kappa(theirs))
    assert len(gaps) == 2 + len(AT_BATS)
    for gap in gaps.values():
        assert gap["z"] < 3.5, gaps
        assert 0.8 < gap["sd_ratio"] < 1.25, gaps
    # The hits reached the model: each player's phi is pulled towards hits / at_bats.
    rates = HITS / AT_BATS
    phi = op.samples_by_chain["phi"][0].mean(0)
    assert np.corrcoef(phi, rates)[0, 1] > 0.9
    assert op.predictive_site == "obs"  # the model's own observed site
    assert op(at_bats=AT_BATS, draws=True).shape[1:] == (len(AT_BATS),)
    assert info["divergences"] == 0
