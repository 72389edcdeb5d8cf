"""NUTS checkpointed by time (``Checkpoint(every_n_seconds=…)``), SIGKILLed during sampling and
run again, gives the draws of an uninterrupted run bit for bit: time-based saves fall only on
host events (the log steps, every 5), whatever the clock. A tiny interval makes every log
step a save; the committed steps are asserted as event steps, never as times."""

from __future__ import annotations

import signal
from pathlib import Path

import numpy as np
import pytest
from test_sigkill_then_rerun_gives_bit_identical_draws import TOTAL, _run, _summary


@pytest.fixture(autouse=True)
def time_cadence(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PIPEKIT_TEST_CKPT_SECONDS", "1e-6")


def test_nuts_time_cadence_sigkill_then_rerun_gives_the_same_draws(tmp_path: Path) -> None:
    (tmp_path / "ref").mkdir()
    ref = _summary(_run(tmp_path / "ref", "ref.npz", "nuts", 10, 0, "none"))
    assert ref["final_step"] == TOTAL["nuts"] and ref["resumed_from_step"] is None

    killed = _run(tmp_path, "out.npz", "nuts", 7, 45, "step")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    committed = sorted(int(p.name) for p in (tmp_path / "ckpt").iterdir() if p.name.isdigit())
    # Saved by the clock alone at log steps, and at the warmup's end (30, a phase end).
    assert committed and all(s % 5 == 0 and s < 45 for s in committed), committed
    assert any(s > 30 for s in committed), committed  # a time-based save among the draws

    info = _summary(_run(tmp_path, "out.npz", "nuts", 7, 0, "none"))
    assert info["resumed_from_step"] == max(committed) and info["final_step"] == TOTAL["nuts"]
    want, got = np.load(tmp_path / "ref" / "ref.npz"), np.load(tmp_path / "out.npz")
    assert sorted(want.files) == sorted(got.files)
    for key in want.files:
        assert want[key].tobytes() == got[key].tobytes(), key
