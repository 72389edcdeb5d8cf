"""One ``NumpyroTask`` runs unchanged under ``numpyro-mcmc`` and ``blackjax`` (only ``backend``
flips) and gives matching posteriors on eight schools; ``ConvergenceStop`` from the shared
Bayesian layer stops a ``numpyro-mcmc`` run too. Here because the integration session installs
both distributions."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from posterior_checks import pdb  # noqa: E402

from pipekit_train import TrainingLoop  # noqa: E402
from pipekit_train.adapters.bayes import ConvergenceStop, NumpyroTask, diagnostics  # noqa: E402

X, Y = pdb.load_data("eight_schools-eight_schools_noncentered")


def _run(backend: str, task: NumpyroTask, **kw) -> tuple:
    loop = TrainingLoop(
        task=task,
        dataset=(X, Y),
        backend=backend,
        seed=1,
        backend_options={"target_accept": 0.9, "steps_per_call": 250},
        log_every_n_steps=250,
        **kw,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return loop.run()


def test_same_task_same_posterior_on_both_backends() -> None:
    task = NumpyroTask(model=pdb.eight_schools, num_warmup=500, num_samples=1000, num_chains=4)
    ops = {b: _run(b, task)[0] for b in ("numpyro-mcmc", "blackjax")}
    a, b = (diagnostics(ops[k].samples_by_chain)["sites"] for k in ("numpyro-mcmc", "blackjax"))
    for site in ("mu", "tau", "theta"):
        ma, mb = np.asarray(a[site]["mean"]), np.asarray(b[site]["mean"])
        se = np.hypot(np.asarray(a[site]["mcse_mean"]), np.asarray(b[site]["mcse_mean"]))
        assert np.all(np.abs(ma - mb) < 4 * se), (site, ma, mb, se)
        ratio = np.asarray(b[site]["sd"]) / np.asarray(a[site]["sd"])
        assert np.all((ratio > 0.85) & (ratio < 1.15)), (site, ratio)
        assert np.max(b[site]["r_hat"]) <= 1.01


def test_convergence_stop_ends_a_numpyro_mcmc_run_early() -> None:
    task = NumpyroTask(model=pdb.eight_schools, num_warmup=300, num_samples=3000, num_chains=4)
    stop = ConvergenceStop(rhat=1.01, ess_bulk=400, every_n_steps=250, min_draws=250)
    op, info = _run("numpyro-mcmc", task, callbacks=[stop])
    assert info["stop_reason"].startswith("ConvergenceStop") and info["final_step"] < 3300
    assert stop.reached["r_hat"] <= 1.01 and op.num_draws == stop.reached["draws_per_chain"]
