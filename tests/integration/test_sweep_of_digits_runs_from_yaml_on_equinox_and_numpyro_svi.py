"""A digits sweep from a sweep YAML through ``pipekit-train sweep``, on equinox (4 trials)
and numpyro-svi (3 trials): every trial is a run in ``<folder>/trials/<n>`` with its
checkpoints and logs, ``--show`` prints the study table, the best trial's config is
written as a loop YAML that ``TrainingLoop.from_yaml`` reads, and ``pipekit-train plot``
draws the study's history and parallel coordinates."""

from __future__ import annotations

from pathlib import Path

import pytest
from _sweep_helpers import cli, env, equinox_loop, study_of, svi_loop, write_sweep

from pipekit_train import TrainingLoop

CASES = {
    "equinox": (
        equinox_loop,
        "val_accuracy",
        "maximize",
        4,
        {
            "optimizer_config.lr": {"type": "float", "low": 1e-3, "high": 3e-2, "log": True},
            "model_op.kwargs.hidden": {"type": "categorical", "choices": [8, 16]},
        },
    ),
    "numpyro-svi": (
        svi_loop,
        "val_loss",
        "minimize",
        3,
        {
            "optimizer_config.lr": {"type": "float", "low": 1e-3, "high": 3e-2, "log": True},
            "task.kwargs.prior_scale": {"type": "float", "low": 0.5, "high": 2.0},
        },
    ),
}


@pytest.mark.parametrize("backend", list(CASES))
def test_sweep_runs_shows_writes_best_and_plots(backend: str, tmp_path: Path) -> None:
    make_loop, objective, direction, n, space = CASES[backend]
    file = write_sweep(
        tmp_path / "sw.yaml",
        make_loop(),
        space,
        objective=objective,
        direction=direction,
        n_trials=n,
        pruner=None,
    )
    e = env(tmp_path / "cache")
    out = cli("sweep", str(file), env=e).stdout
    folder = tmp_path / "sw"
    rows = study_of(folder)
    assert [r["number"] for r in rows] == list(range(n))
    assert all(r["state"] == "COMPLETE" for r in rows)
    for r in rows:
        assert r["value"] == r["final_metrics"][objective]
        trial = folder / "trials" / str(r["number"])
        assert (trial / "20").is_dir() and (trial / "logs" / "jsonl" / "metrics.jsonl").is_file()
        assert set(r["params"]) == set(space)
    best = min if direction == "minimize" else max
    best_row = best(rows, key=lambda r: r["value"])
    assert f"best trial {best_row['number']}" in out
    shown = cli("sweep", str(file), "--show", env=e).stdout
    assert shown.splitlines()[0].split()[:3] == ["trial", "state", "value"]
    assert f"{n} of {n} trials finished" in shown
    loop = TrainingLoop.from_yaml(folder / "best.yaml")
    assert loop.checkpoint_dir == str(folder / "best")
    for path, value in best_row["params"].items():
        node = loop.to_dict()
        for part in path.split("."):
            node = node[part]
        assert node == value
    plots = cli("plot", str(folder), env=e).stdout.split()
    assert sorted(Path(p).name for p in plots) == [
        "sweep_history.png",
        "sweep_parallel_coordinates.png",
    ]
    assert all(Path(p).stat().st_size > 0 for p in plots)
