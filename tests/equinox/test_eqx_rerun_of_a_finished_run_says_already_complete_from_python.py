"""From Python, `TrainingLoop.run()` on a finished run says so in `backend_info`
(`stop_reason` "already complete at step N") and still returns the trained op, restored from
the checkpoint bit for bit; a checkpoint of another run is refused (by the config-derivable
field) before the loop's factories are built."""

from __future__ import annotations

import pytest
from _eqx_helpers import assert_bit_identical, run_loop, tiny_loop

from pipekit_train import CheckpointError, TrainingLoop


def test_rerun_says_already_complete_and_returns_the_trained_op(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    op1, info1 = run_loop(tiny_loop(checkpoint_dir=ckpt))
    assert info1["stop_reason"] is None and info1["resumed_from_step"] is None
    op2, info2 = run_loop(tiny_loop(checkpoint_dir=ckpt))
    assert info2["stop_reason"] == "already complete at step 10"
    assert info2["final_step"] == info2["resumed_from_step"] == 10
    assert info2["steps_per_second"] is None  # no step ran
    assert_bit_identical(op1, op2)


def test_a_foreign_checkpoint_is_refused_before_the_factories_are_built(tmp_path):
    ckpt = str(tmp_path / "ckpt")
    run_loop(tiny_loop(checkpoint_dir=ckpt))
    loop = TrainingLoop(
        model_op="no_such_module_anywhere:make_model",
        dataset="no_such_module_anywhere:load",
        loss="cross_entropy",
        batch_size=16,
        max_steps=10,
        optimizer_config={"name": "adam", "lr": 1e-2},
        seed=7,
        checkpoint_dir=ckpt,
    )
    with pytest.raises(CheckpointError, match=r"seed: checkpoint 0 != this run 7"):
        run_loop(loop)
