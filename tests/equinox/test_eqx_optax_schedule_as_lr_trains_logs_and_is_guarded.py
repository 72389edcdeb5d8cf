"""An optax schedule as ``optimizer_config.lr`` drives the optimiser, is logged, and is guarded.

In Python, ``lr`` may be the user's own schedule callable. pipekit builds the
rest of the optimiser from the dict as usual; the ``lr`` metric is the schedule's
value for the latest update; the resume guard records the schedule's values at
fixed steps, so a rerun with another schedule is a ``CheckpointError`` naming
``optimizer`` while the same schedule rebuilt resumes. ``to_yaml()`` names
``optimizer_config.lr``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import optax
import pytest
from _eqx_helpers import run_loop, tiny_loop

from pipekit_train import CheckpointError, ConfigError


def _config(peak: float) -> dict:
    return {"name": "adam", "lr": optax.linear_schedule(peak, peak / 10, 8)}


def test_schedule_callable_trains_logs_and_guards_the_resume(tmp_path: Path) -> None:
    ckpt = str(tmp_path / "ckpt")
    _, info = run_loop(tiny_loop(optimizer_config=_config(1e-2), checkpoint_dir=ckpt, max_steps=5))
    # the metric of step 5 is read from the state it started from (4 updates in): schedule(3)
    expected = optax.linear_schedule(1e-2, 1e-3, 8)(3)
    np.testing.assert_allclose(info["final_metrics"]["lr"], expected, rtol=1e-6)
    with pytest.raises(CheckpointError, match="optimizer"):
        run_loop(tiny_loop(optimizer_config=_config(2e-2), checkpoint_dir=ckpt))
    _, info = run_loop(tiny_loop(optimizer_config=_config(1e-2), checkpoint_dir=ckpt))
    assert info["resumed_from_step"] == 5


def test_to_yaml_names_the_lr_field() -> None:
    loop = tiny_loop(model_op="_eqx_helpers:make_model", optimizer_config=_config(1e-2))
    with pytest.raises(ConfigError) as info:
        loop.to_yaml()
    assert info.value.field == "optimizer_config.lr"
