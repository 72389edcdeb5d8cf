"""A population sweep SIGKILLed while its population is in flight resumes that population.

Real subprocesses, a real SIGKILL (``_population_sweep.py``): four trials as one population,
a ``ThresholdPruner`` that prunes one member at step 10. Killed right after the first
``study.tell`` (the pruned member's, the others training on) or the second (the first
finished member's), the sweep started again adopts the WHOLE group (the finished member
included, masked), resumes it from its checkpoint (never from step 0, never as a smaller
population that the checkpoint refuses) and ends with the study of an uninterrupted sweep:
same states, params, values, per-step reports and final metrics, bit for bit.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from _population_sweep import make_sweep, trials_of

WORKER = Path(__file__).with_name("_population_sweep.py")


def _sweep(
    folder: Path, kill_after: int, starts: Path, cache: Path
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PIPEKIT_TEST_STARTS": str(starts)}
    return subprocess.run(
        [sys.executable, str(WORKER), str(folder), str(kill_after), str(cache)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def _starts(path: Path) -> list[int]:
    return [int(line.split()[1]) for line in path.read_text().splitlines()]


def test_killed_population_sweep_resumes_to_the_uninterrupted_study(tmp_path: Path) -> None:
    cache = tmp_path / "jax-cache"
    reference = trials_of(make_sweep(tmp_path / "ref", 4, str(cache)).run())
    assert [t["state"] for t in reference] == ["COMPLETE", "PRUNED", "COMPLETE", "COMPLETE"]

    for kill_after in (1, 2):
        folder, starts = tmp_path / f"killed_{kill_after}", tmp_path / f"starts_{kill_after}"
        killed = _sweep(folder, kill_after, starts, cache)
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
        resumed = _sweep(folder, 0, starts, cache)
        assert resumed.returncode == 0, resumed.stderr[-3000:]
        first, again = _starts(starts)  # one population, started twice
        assert first == 0 and again > 0, _starts(starts)

        from pipekit_train.sweep._table import load_study

        got = trials_of(load_study(folder))
        assert got == reference, (kill_after, got, reference)
        assert sorted(os.listdir(folder / "populations")) == ["0"]
