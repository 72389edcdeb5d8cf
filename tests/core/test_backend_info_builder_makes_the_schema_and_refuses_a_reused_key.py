"""``engine.backend_info`` writes every schema key with its type from a run's outcome, and
refuses a backend extra that would give a schema key a second meaning."""

from __future__ import annotations

import time

import pytest

from pipekit_train.engine import REQUIRED_KEYS, RunOutcome, backend_info


def _outcome(steps_run: int = 4, train_seconds: float = 0.5) -> RunOutcome:
    return RunOutcome(
        final_step=4,
        resumed_from_step=None,
        last_checkpoint_step=4,
        stop_reason=None,
        interrupted=None,
        train_seconds=train_seconds,
        steps_run=steps_run,
        final_metrics={"loss": 0.25},
        run_dir="runs/x",
    )


def test_every_schema_key_has_its_type_and_extras_sit_beside_them() -> None:
    info = backend_info(
        "toy",
        _outcome(),
        versions={"pipekit-train-core": "0.1.0"},
        started=time.perf_counter(),
        devices=["cpu"],
        extras={"sampler": "nuts"},
    )
    assert set(info) == set(REQUIRED_KEYS) | {"sampler"}
    for key, types in REQUIRED_KEYS.items():
        assert isinstance(info[key], types), key
    assert info["steps_per_second"] == pytest.approx(8.0)
    assert info["diagnostics"] is None and info["warnings"] == []


def test_no_step_run_has_no_rate() -> None:
    info = backend_info(
        "toy", _outcome(steps_run=0), versions={}, started=time.perf_counter(), devices=["cpu"]
    )
    assert info["steps_per_second"] is None


def test_an_extra_reusing_a_schema_key_is_refused() -> None:
    with pytest.raises(ValueError, match=r"\['final_step'\]"):
        backend_info(
            "toy",
            _outcome(),
            versions={},
            started=time.perf_counter(),
            devices=["cpu"],
            extras={"final_step": 3},
        )
