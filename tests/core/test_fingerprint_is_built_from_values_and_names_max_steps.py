"""The core fingerprint: values, not reprs; ``max_steps`` only when the schedule depends on it,
and a mismatch message that names ``max_steps`` and the schedule field."""

from __future__ import annotations

import pytest

from pipekit_train import TrainingLoop
from pipekit_train.errors import CheckpointError
from pipekit_train.fingerprint import check_fingerprint, fingerprint, structure_digest


def _loop(max_steps: int, lr) -> TrainingLoop:
    return TrainingLoop(
        dataset={"x": [0.0], "y": [0.0]},
        loss="mse",
        max_steps=max_steps,
        optimizer_config={"name": "adam", "lr": lr},
    )


def _fp(loop: TrainingLoop) -> dict:
    return fingerprint(loop, backend="toy", model_structure="abc", dataset_length=8)


def test_structure_digest_depends_on_paths_shapes_dtypes_only():
    a = structure_digest([(".w", (2, 3), "float32")])
    assert a == structure_digest([(".w", [2, 3], "float32")])
    assert a != structure_digest([(".w", (3, 2), "float32")])
    assert a != structure_digest([(".v", (2, 3), "float32")])


def test_constant_rate_trains_longer():
    assert "max_steps" not in _fp(_loop(10, 1e-3))
    assert (
        check_fingerprint(_fp(_loop(10, 1e-3)), _fp(_loop(20, "1e-3")), resume="auto", where="x")
        is None
    )


def test_schedule_over_max_steps_refuses_a_changed_max_steps():
    cosine = {"schedule": "cosine_decay", "init_value": 1e-3}
    old, new = _fp(_loop(10, cosine)), _fp(_loop(40, cosine))
    with pytest.raises(CheckpointError) as info:
        check_fingerprint(old, new, resume="auto", where="at step 10 in DIR")
    message = str(info.value)
    assert "max_steps changed (10 -> 40)" in message
    assert "optimizer_config.lr.decay_steps" in message
    warning = check_fingerprint(old, new, resume="force", where="at step 10 in DIR")
    assert warning is not None and "Resuming anyway" in warning
