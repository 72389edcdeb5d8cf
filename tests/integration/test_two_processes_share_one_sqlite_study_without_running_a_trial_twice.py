"""Two ``pipekit-train sweep`` processes started together on one sweep file (one SQLite
study) finish its budget of 5 trials between them: exactly 5 trials, all finished, each
run exactly once (each trial folder's run starts once, from step 0), no 'database is
locked' failure."""

from __future__ import annotations

from pathlib import Path

from _sweep_helpers import env, equinox_loop, popen, starts, study_of, write_sweep

SPACE = {"optimizer_config.lr": {"type": "float", "low": 1e-3, "high": 3e-2, "log": True}}


def test_two_processes_complete_the_budget_once(tmp_path: Path) -> None:
    file = write_sweep(tmp_path / "shared.yaml", equinox_loop(), SPACE, n_trials=5)
    log = tmp_path / "starts.txt"
    e = env(tmp_path / "cache", PIPEKIT_TEST_STARTS=str(log))
    procs = [popen("sweep", str(file), env=e) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    rows = study_of(tmp_path / "shared")
    assert [r["number"] for r in rows] == [0, 1, 2, 3, 4]
    assert all(r["state"] in ("COMPLETE", "PRUNED") for r in rows)
    runs = sorted((Path(f).name, step) for _, f, step in starts(log))
    assert runs == [(str(n), 0) for n in range(5)]
