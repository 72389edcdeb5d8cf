"""The diagnostics name a chain that never moved, or that warmup left with a collapsed step
size (cause measured: its step size and log density against the other chains'; fix: init_values or
init_strategy) and chains that each move but sit apart (a multimodal posterior), instead of
R-hat's "run longer" (issue 25 item 3); divergences are located at the site where they
concentrate, and called a funnel's neck, with the non-centred form as the fix, where that
site is a scale; a low E-BFMI warns. Real ArviZ on constructed draws."""

from __future__ import annotations

import numpy as np

from pipekit_train.adapters.bayes import diagnostic_warnings, diagnostics

RNG = np.random.default_rng(0)


def test_a_chain_that_never_moved_is_called_stuck_with_the_fix() -> None:
    a = RNG.normal(size=(4, 500))
    a[2] = 3.0  # chain 2 never left its start
    msgs = diagnostic_warnings(diagnostics({"a": a}))
    stuck = [m for m in msgs if "never moved" in m]
    assert stuck and "chain(s) 2" in stuck[0] and "init_values" in stuck[0], msgs
    # The model change for a start where the density is flat (an ARMA's non-invertible MA).
    assert "theta ~ Uniform(-1, 1)" in stuck[0], msgs
    assert not any("run longer" in m for m in msgs), msgs


def test_chains_in_different_modes_are_called_separated() -> None:
    a = RNG.normal(size=(4, 500))
    a[:2] += 10.0
    diag = diagnostics({"mu": a})
    msgs = diagnostic_warnings(diag)
    apart = [m for m in msgs if "sit apart" in m]
    assert apart and "mu" in apart[0] and "multimodal" in apart[0], msgs
    assert not any("run longer" in m for m in msgs), msgs
    assert diag["stuck_chains"] == []


def test_mixing_chains_give_no_health_warning_and_a_long_run_r_hat_says_run_longer() -> None:
    diag = diagnostics({"a": RNG.normal(size=(4, 500))})
    assert diagnostic_warnings(diag) == []
    drift = np.cumsum(RNG.normal(size=(4, 500)), axis=1) * 0.05 + RNG.normal(size=(4, 500))
    msgs = diagnostic_warnings(diagnostics({"a": drift}))
    assert not any("never moved" in m or "sit apart" in m for m in msgs)


def test_divergences_are_located_at_the_site_where_they_concentrate() -> None:
    tau = np.abs(RNG.normal(3.0, 1.0, size=(2, 400)))
    mu = RNG.normal(size=(2, 400))
    diverging = tau < 1.5
    msgs = diagnostic_warnings(diagnostics({"tau": tau, "mu": mu}, diverging))
    div = [m for m in msgs if "divergent" in m]
    assert div and "where tau is low" in div[0], msgs
    # tau is a scale (every draw positive), small where it diverges: a funnel's neck, whose
    # fix is the non-centred form, named.
    assert "funnel" in div[0] and "LocScaleReparam" in div[0], msgs


def test_divergences_where_an_unbounded_site_is_low_keep_the_generic_fix() -> None:
    mu = RNG.normal(size=(2, 400))
    msgs = diagnostic_warnings(diagnostics({"mu": mu}, mu < -1.0))
    (div,) = [m for m in msgs if "divergent" in m]
    assert "where mu is low" in div and "funnel" not in div and "target_accept" in div


def test_low_e_bfmi_warns_per_chain() -> None:
    energy = np.cumsum(RNG.normal(size=(2, 500)), axis=1)  # a random walk: E-BFMI ~ 0
    diag = diagnostics({"a": RNG.normal(size=(2, 500))}, sample_stats={"energy": energy})
    msgs = diagnostic_warnings(diag)
    assert any("E-BFMI below 0.3 for chain 0" in m and "LocScaleReparam" in m for m in msgs)


def test_a_chain_warmup_left_with_a_collapsed_step_is_named_stuck_with_what_was_measured():
    # Chain 1 moves a hair each draw (so the move count alone would pass it), but warmup left
    # its step size a billionth of the others' and its log density far below theirs: it was
    # still stuck at the end of warmup, which the health line says with the figures.
    a = RNG.normal(size=(4, 500))
    a[1] = 5.0 + 1e-9 * RNG.normal(size=500)
    step = np.repeat(np.array([[0.3], [3e-10], [0.5], [0.7]]), 500, axis=1)
    lp = RNG.normal(-10.0, 1.0, size=(4, 500))
    lp[1] = -4.0e5
    depth = np.full((4, 500), 3)
    depth[1] = 10  # the stuck chain saturates the tree: that is its figure, not the others'
    diag = diagnostics(
        {"a": a},
        sample_stats={"step_size": step, "lp": lp, "tree_depth": depth},
        max_tree_depth=10,
    )
    assert diag["stuck_chains"] == [1]
    assert diag["warmup_end"]["step_size"] == [0.3, 3e-10, 0.5, 0.7]
    assert diag["tree_depth_saturated"] == 0
    msgs = diagnostic_warnings(diag)
    (stuck,) = [m for m in msgs if "never moved" in m]
    assert "chain(s) 1" in stuck and "end of warmup" in stuck, stuck
    assert "step size at 3e-10" in stuck and "step sizes are 0.3 to 0.7" in stuck, stuck
    assert "log density at -400000" in stuck and "shrank the step" in stuck, stuck
    assert not any("maximum tree depth" in m or "run longer" in m for m in msgs), msgs


def test_chains_with_like_step_sizes_are_not_called_stuck():
    step = np.repeat(np.array([[0.3], [0.05], [0.5]]), 200, axis=1)  # a 10x spread is normal
    diag = diagnostics({"a": RNG.normal(size=(3, 200))}, sample_stats={"step_size": step})
    assert diag["stuck_chains"] == [] and diagnostic_warnings(diag) == []


def test_step_sizes_below_the_floor_are_collapsed_even_when_every_chain_is():
    from pipekit_train.adapters.bayes._health import collapsed_steps

    # blackjax nuts on the ARMA from uniform starts: every chain in the flat tail.
    assert collapsed_steps([3.28e-16, 2.65e-20, 1.36e-41, 1.58e-14]) == [0, 1, 2, 3]
    assert collapsed_steps([0.3, 1.9e-16, 0.5, 0.7]) == [1]
    assert collapsed_steps([0.3, 0.05, 0.5]) == [] and collapsed_steps([0.3]) == []
    assert collapsed_steps([0.3, float("nan"), 0.5]) == [1]
