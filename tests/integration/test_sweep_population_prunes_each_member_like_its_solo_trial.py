"""A population sweep asks Optuna's pruner for each member, as a one-by-one sweep does.

A real Optuna study (``ThresholdPruner`` on ``val_loss``, ``_population_sweep.py``) over
four trials, one of which draws a diverging learning rate. Run as one vmapped population,
each member's ``val_loss`` is reported to its own trial after every evaluation; the bad
member's trial is ``PRUNED`` at the step the pruner said (the same step as when the same
trials run one by one, with the same reported values to float32 rounding) and gets no
report after it, while the other members go on to ``COMPLETE``. The pruned member is masked,
not removed: the others' results are bit for bit those of the same population without a
pruner.
"""

from __future__ import annotations

import math
from pathlib import Path

from _population_sweep import BAD_LR, make_sweep, trials_of


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6)


def test_the_pruner_prunes_the_bad_member_and_the_rest_go_on(tmp_path: Path) -> None:
    cache = str(tmp_path / "jax-cache")
    pop = trials_of(make_sweep(tmp_path / "pop", 4, cache).run())
    solo = trials_of(make_sweep(tmp_path / "solo", None, cache).run())
    unpruned = trials_of(make_sweep(tmp_path / "nopruner", 4, cache, pruner=None).run())

    lrs = [t["params"]["optimizer_config.lr"] for t in pop]
    assert BAD_LR in lrs and any(lr != BAD_LR for lr in lrs), lrs
    assert [t["params"] for t in solo] == [t["params"] for t in pop]
    for t, s in zip(pop, solo, strict=True):
        bad = t["params"]["optimizer_config.lr"] == BAD_LR
        assert t["state"] == s["state"] == ("PRUNED" if bad else "COMPLETE"), (t, s)
        assert t["pruned_at"] == s["pruned_at"] == (10 if bad else None), (t, s)
        # reported at every evaluation up to the prune, never after it
        assert sorted(t["reports"]) == sorted(s["reports"]) == ([5, 10] if bad else [5, 10, 15, 20])
        for step, value in t["reports"].items():
            assert _close(value, s["reports"][step]), (step, t, s)
        assert _close(t["value"], s["value"]), (t, s)
    # masked, not removed: the members that go on have the bits of an unpruned population
    for t, u in zip(pop, unpruned, strict=True):
        assert u["state"] == "COMPLETE"
        if t["state"] == "COMPLETE":
            assert t["value"] == u["value"] and t["reports"] == u["reports"], (t, u)
            assert t["final_metrics"] == u["final_metrics"]
