"""``population: N`` in a sweep file runs N trials at once through the Equinox backend's
``run_population``: the same trials (params) as the sweep run one trial at a time, each
trial's objective equal to its solo run's to float32 rounding, and the CLI says which way
the trials ran and why (the documented rule); a model the rule says does not pay on CPU
runs one trial at a time unless ``population_rule: false``."""

from __future__ import annotations

from pathlib import Path

from _sweep_helpers import cli, env, equinox_loop, study_of, write_sweep

SPACE = {"optimizer_config.lr": {"type": "float", "low": 1e-3, "high": 3e-2, "log": True}}


def _loop(hidden: int) -> dict[str, object]:
    loop = equinox_loop(max_steps=20)
    loop["callbacks"] = [{"Checkpoint": {"every_n_steps": 10, "keep_last": 2}}]
    loop["model_op"]["kwargs"]["hidden"] = hidden  # type: ignore[index]
    return loop


def _sweep(
    tmp_path: Path, name: str, hidden: int, n_trials: int = 4, **kw: object
) -> tuple[list[dict[str, object]], str]:
    file = write_sweep(
        tmp_path / f"{name}.yaml",
        _loop(hidden),
        SPACE,
        objective="val_loss",
        direction="minimize",
        n_trials=n_trials,
        pruner=None,
        # A population's members are asked together, before any of them finishes: with
        # TPE past its start-up trials the one-by-one sweep would see more history.
        sampler={"name": "TPESampler", "kwargs": {"n_startup_trials": n_trials}},
        **kw,
    )
    done = cli("sweep", str(file), env=env(tmp_path / "cache"))
    return study_of(tmp_path / name), done.stderr


def test_population_sweep_equals_the_one_by_one_sweep(tmp_path: Path) -> None:
    solo, solo_err = _sweep(tmp_path, "solo", hidden=16)
    pop, pop_err = _sweep(tmp_path, "pop", hidden=16, population=4)
    assert "population:" not in solo_err
    assert "4 trials at a time as one vmapped program" in pop_err, pop_err
    assert (tmp_path / "pop" / "populations").is_dir()
    assert [r["params"] for r in pop] == [r["params"] for r in solo]
    assert all(r["state"] == "COMPLETE" for r in pop + solo)
    for p, s in zip(pop, solo, strict=True):
        assert abs(float(p["value"]) - float(s["value"])) <= 1e-4 * max(
            1.0, abs(float(s["value"]))
        ), (p, s)


def test_the_rule_runs_a_large_model_one_trial_at_a_time(tmp_path: Path) -> None:
    # hidden 1024: 1024*64 + 1024 + 1024*10 + 10 = 76,810 parameters x 32 rows > 2,000,000
    rows, err = _sweep(tmp_path, "big", hidden=1024, population=2, n_trials=2)
    assert "one trial at a time" in err, err
    assert not (tmp_path / "big" / "populations").exists()
    assert [r["state"] for r in rows] == ["COMPLETE", "COMPLETE"]
