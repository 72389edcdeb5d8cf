"""A run checkpointed by time (``Checkpoint(every_n_seconds=…)``), SIGKILLed mid-run and run
again, resumes to the same bits as an uninterrupted run: time-based saves fall only on host
events (here the log steps, every 3), so the compiled chunks are the static ones.

A tiny interval makes every log step a save; which steps were committed is asserted as a
subset of the event steps, never as a time.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from _byo_runs import assert_same_bits as _assert_same_bits
from _byo_runs import run_resume_worker as _run_steps
from _byo_runs import summary as _summary


@pytest.fixture(autouse=True)
def time_cadence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIPEKIT_TEST_CKPT_SECONDS", "1e-6")


def test_time_cadence_sigkill_then_rerun_matches_uninterrupted_run(tmp_path: Path) -> None:
    cache = tmp_path / "jax_cache"
    ref = _summary(_run_steps(tmp_path, "ref_ckpt", "ref.npz", 4, 0, "none", cache))
    assert ref["resumed_from_step"] is None and ref["final_step"] == 60

    killed = _run_steps(tmp_path, "ckpt", "out.npz", 4, 39, "step", cache)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    # Saved by the clock alone (there is no step cadence), at log steps only; the kill at
    # 39's event comes before its checkpoint.
    assert committed and all(s % 3 == 0 and s <= 39 for s in committed), committed

    info = _summary(_run_steps(tmp_path, "ckpt", "out.npz", 4, 0, "none", cache))
    assert info["resumed_from_step"] in committed and info["final_step"] == 60
    _assert_same_bits(tmp_path / "ref.npz", tmp_path / "out.npz")
