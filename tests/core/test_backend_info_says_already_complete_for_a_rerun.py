"""`backend_info` of a run that resumed at its last step and ran none says why it stopped:
`stop_reason` "already complete at step N" (every backend builds its report here); a run
that trained, was interrupted, or gave its own reason keeps that."""

from __future__ import annotations

import time

from pipekit_train.engine import RunOutcome, backend_info


def _info(**outcome: object) -> dict[str, object]:
    base: dict[str, object] = {
        "final_step": 20,
        "resumed_from_step": 20,
        "last_checkpoint_step": 20,
        "stop_reason": None,
        "interrupted": None,
        "train_seconds": 0.0,
        "steps_run": 0,
    }
    base.update(outcome)
    return backend_info(
        "toy",
        RunOutcome(**base),  # type: ignore[arg-type]
        versions={},
        started=time.perf_counter(),
        devices=["cpu"],
    )


def test_a_rerun_of_a_finished_run_says_already_complete() -> None:
    assert _info()["stop_reason"] == "already complete at step 20"


def test_other_endings_keep_their_reason() -> None:
    assert _info(resumed_from_step=None, steps_run=20)["stop_reason"] is None
    assert _info(resumed_from_step=10, steps_run=10)["stop_reason"] is None
    assert _info(interrupted="SIGTERM", stop_reason="SIGTERM: x")["stop_reason"] == "SIGTERM: x"
    assert _info(interrupted="SIGINT")["stop_reason"] is None
    assert _info(stop_reason="early stopping")["stop_reason"] == "early stopping"
