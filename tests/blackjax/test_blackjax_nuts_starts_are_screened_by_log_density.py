"""blackjax nuts starts a NumPyro task's chains screened: each at the best, by log density
with a finite gradient, of its own uniform start and 16 more (``bayes.screened_positions``).

A start where the density is flat far from the posterior is left; a candidate whose
gradient is not finite never wins; a chain none of whose candidates beats it keeps its own
start; ``init_strategy: "uniform"`` and ``init_values`` keep the old starts. On posteriordb's
ARMA(1,1), where two of four uniform starts leave chains stuck, every screened chain moves.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
from _bjx_helpers import numpyro_regression as regression
from _bjx_helpers import pdb, regression_data

from pipekit_train import TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask, screened_positions
from pipekit_train.adapters.blackjax import BlackjaxTask
from pipekit_train.adapters.blackjax._target import build_target


def _plateau(p):
    """A bowl at 0 inside |x| < 1, flat (finite, zero gradient) outside: a stuck start."""
    x = p["x"][0]
    return jnp.where(jnp.abs(x) < 1.0, -(x**2), -1e6)


def test_a_flat_start_is_left_for_the_best_candidate():
    starts = {"x": jnp.array([[1.9], [-1.7], [0.1]])}
    out, found = screened_positions(_plateau, starts, jax.random.PRNGKey(0))
    assert np.all(np.abs(np.asarray(out["x"])) < 1.0) and bool(np.all(found))
    assert abs(float(out["x"][2, 0])) <= 0.1  # a good start is never traded for a worse one


@jax.custom_jvp
def _cliff(x):
    """1e3 for x > 0 (every such candidate would win on value) with a NaN gradient there;
    a bowl at 0 for x <= 0."""
    return jnp.where(x > 0, 1e3, -(x**2))


@_cliff.defjvp
def _cliff_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _cliff(x), jnp.where(x > 0, jnp.nan, -2.0 * x) * t


def test_a_candidate_with_a_non_finite_gradient_never_wins_and_a_good_start_stays():
    start = {"x": jnp.array([[-1.5]])}
    out, found = screened_positions(
        lambda p: _cliff(p["x"][0]), start, jax.random.PRNGKey(1), candidates=64
    )
    # About half the 64 candidates lie at x > 0 with the higher value: none may be chosen.
    assert float(out["x"][0, 0]) <= 0.0 and bool(found[0])
    assert -1.5 < float(out["x"][0, 0])  # and a better negative candidate was
    # Every candidate is worse than a start at the bowl's bottom: the start stays.
    best = {"x": jnp.zeros((1, 3))}
    kept, _ = screened_positions(lambda p: -jnp.sum(p["x"] ** 2), best, jax.random.PRNGKey(2))
    assert np.asarray(kept["x"]).tobytes() == np.asarray(best["x"]).tobytes()


def _positions(**kwargs):
    x, y = regression_data()
    task = BlackjaxTask(numpyro_task=NumpyroTask(model=regression, num_chains=3))
    target = build_target(task, "nuts", x, y, 3, jax.random.PRNGKey(0), 16, **kwargs)
    return {k: np.asarray(v) for k, v in target.positions.items()}


def test_uniform_and_init_values_keep_the_old_starts():
    uniform = _positions()
    screened = _positions(screened=True)
    assert any(not np.array_equal(uniform[k], screened[k]) for k in uniform)
    given = _positions(screened=True, init_values={"beta": np.array([0.5, -0.5])})
    np.testing.assert_allclose(given["beta"], np.tile([0.5, -0.5], (3, 1)))


def _arma(**options):
    x, y = pdb.load_data("arma-arma11")
    loop = TrainingLoop(
        task=BlackjaxTask(
            numpyro_task=NumpyroTask(
                model=pdb.arma11, num_warmup=300, num_samples=300, num_chains=4, ordered=True
            )
        ),
        dataset=(x, y),
        backend="blackjax",
        seed=0,
        backend_options={"compilation_cache": "off", **options},
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, info = loop.run()
    return info, [str(w.message) for w in caught]


def test_every_screened_arma_chain_moves_where_uniform_starts_leave_some_stuck():
    info, caught = _arma(init_strategy="uniform")
    assert info["diagnostics"]["stuck_chains"], caught
    # Named when warmup ends, before any draw (bayes.WarmupCheck), as well as at the end.
    assert any("at the end of warmup (step 300)" in c for c in caught), caught
    info, caught = _arma()
    assert info["diagnostics"]["stuck_chains"] == [], caught
    assert not any("never moved" in c or "at the end of warmup" in c for c in caught)
