"""SIGKILL the sweep process in the middle of a trial (at step 25 of 30, after that trial's
step-10 checkpoint was complete and the step-20 one handed to the writer), start it again,
and the finished study equals an uninterrupted sweep's: the same trials with the same
params, states, values, reported metrics and final metrics, bit for bit. The killed trial
is run again in its own folder from its checkpoint (not replaced by a new trial), and the
trials after it are suggested as they were."""

from __future__ import annotations

import signal
from pathlib import Path

from _sweep_helpers import cli, env, equinox_loop, starts, study_of, write_sweep

SPACE = {
    "optimizer_config.lr": {"type": "float", "low": 1e-3, "high": 3e-2, "log": True},
    "seed": {"type": "int", "low": 0, "high": 1000},
}


def test_killed_sweep_resumes_to_the_uninterrupted_study(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    whole = write_sweep(tmp_path / "whole.yaml", equinox_loop(max_steps=30), SPACE)
    cli("sweep", str(whole), env=env(cache))

    killed = write_sweep(tmp_path / "killed.yaml", equinox_loop(max_steps=30), SPACE)
    log = tmp_path / "starts.txt"
    first = cli(
        "sweep",
        str(killed),
        check=False,
        env=env(cache, PIPEKIT_TEST_KILL_AT="2:25", PIPEKIT_TEST_STARTS=str(log)),
    )
    assert first.returncode == -signal.SIGKILL, first.stderr
    folder = tmp_path / "killed"
    mid = study_of(folder)
    assert [r["state"] != "RUNNING" for r in mid] == [True, True, False]
    assert (folder / "trials" / "2" / "10").is_dir()
    assert not (folder / "trials" / "2" / "30").exists()

    cli("sweep", str(killed), env=env(cache, PIPEKIT_TEST_STARTS=str(log)))
    assert study_of(folder) == study_of(tmp_path / "whole")
    runs = [(Path(f).name, step) for _, f, step in starts(log)]
    # trial 2 resumed from its newest complete checkpoint; no other trial ran twice
    assert runs[:3] == [("0", 0), ("1", 0), ("2", 0)] and runs[4:] == [("3", 0)]
    assert runs[3] in (("2", 10), ("2", 20))
