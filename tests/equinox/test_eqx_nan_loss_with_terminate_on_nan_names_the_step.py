"""NaN loss + ``TerminateOnNaN``: a TrainingError naming the first bad step, at any fusion.

With a ``checkpoint_dir``, the checkpoints written before the NaN stay on disk
and no checkpoint of the bad state is written.
"""

from __future__ import annotations

import numpy as np
import pytest
from _eqx_helpers import make_data, read_jsonl, run_loop, tiny_loop

from pipekit_train import Checkpoint, TerminateOnNaN, TrainingError

EXPLODING = {"name": "sgd", "lr": 1e10}  # finite for three steps, NaN at step 4


@pytest.mark.parametrize("k", [1, 3, 50])
def test_diverging_lr_names_the_first_nan_step(k):
    loop = tiny_loop(
        optimizer_config=EXPLODING,
        callbacks=[TerminateOnNaN()],
        max_steps=20,
        log_every_n_steps=10,  # the NaN happens inside a window: every step is still checked
        backend_options={"steps_per_call": k},
    )
    with pytest.raises(TrainingError) as info:
        run_loop(loop)
    msg = str(info.value)
    assert "TerminateOnNaN" in msg and "loss became nan at step 4" in msg
    assert "optimizer_config.lr" in msg  # how to fix it


def test_nan_in_the_data_names_the_batch_that_holds_it(tmp_path):
    data = make_data(64)
    data["x"][40, 2] = np.nan  # row 40 is in batch 3 (rows 32..47) without shuffling
    # Arrays with NaN are rejected before training (a DataError, see
    # test_eqx_nan_in_data_is_data_error_before_compiling.py); a per-record source is not
    # scanned up front, so its NaN reaches training and TerminateOnNaN names the step.
    records = [(data["x"][i], data["y"][i]) for i in range(len(data["x"]))]
    loop = tiny_loop(
        dataset=records,
        callbacks=[TerminateOnNaN()],
        max_steps=8,
        log_every_n_steps=4,
        metric_writer=f"jsonl:{tmp_path / 'm.jsonl'}",
        backend_options={"shuffle": False},
    )
    with pytest.raises(TrainingError, match="at step 3;"):
        run_loop(loop)
    # The metric writer was closed on the way out; nothing past the failing window is logged.
    steps = [row["step"] for row in read_jsonl(tmp_path / "m.jsonl")]
    assert max(steps, default=0) <= 4


def test_without_terminate_on_nan_training_runs_to_the_end():
    _, info = run_loop(tiny_loop(optimizer_config=EXPLODING, max_steps=6))
    assert info["final_step"] == 6
    assert np.isnan(info["final_metrics"]["loss"])


def test_earlier_checkpoints_survive_the_nan(tmp_path):
    from pipekit_train.engine import inspect_checkpoints

    ckpt = tmp_path / "ckpt"
    loop = tiny_loop(
        optimizer_config=EXPLODING,
        callbacks=[Checkpoint(every_n_steps=2, keep_last=5), TerminateOnNaN()],
        checkpoint_dir=str(ckpt),
        max_steps=10,
        log_every_n_steps=10,
    )
    with pytest.raises(TrainingError, match="at step 4"):
        run_loop(loop)
    rows = inspect_checkpoints(str(ckpt))
    steps = sorted(int(r["step"]) for r in rows)
    assert steps == [2], rows  # step 2 kept; the bad state at step 4 not written
