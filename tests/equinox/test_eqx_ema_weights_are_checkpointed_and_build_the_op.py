"""``ema_decay``: the averaged weights live in the checkpoint, drive evaluation and build the op.

The average is part of the carry: a run stopped at step 10 and continued to 20
(``max_steps`` raised, same ``checkpoint_dir``) ends with a checkpoint that equals
an uninterrupted 20-step run's bit for bit, EMA leaves included. The returned op
is built from the EMA leaves (not the last iterate), and evaluation uses them
too: the op's accuracy on ``val_dataset`` is the reported ``val_accuracy``.
Resuming with another ``ema_decay`` is refused by the resume guard, by name.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _eqx_helpers import leaves, make_data, run_loop, tiny_loop

from pipekit_train import Checkpoint
from pipekit_train.errors import CheckpointError
from pipekit_train.jax.checkpoint import read_state

VAL = make_data(48, seed=4)


def _loop(ckpt, max_steps: int, ema_decay: float = 0.9):
    return tiny_loop(
        max_steps=max_steps,
        ema_decay=ema_decay,
        val_dataset=VAL,
        checkpoint_dir=str(ckpt),
        callbacks=[Checkpoint(every_n_steps=10)],
    )


def _carry(ckpt, step: int) -> list[np.ndarray]:
    state = read_state(ckpt / str(step))
    return list(state.values())  # the carry's order: read_state keeps it (names are key paths)


def test_resume_keeps_the_ema_bit_identical_and_the_op_is_the_ema(tmp_path):
    whole, info = run_loop(_loop(tmp_path / "whole", 20))
    run_loop(_loop(tmp_path / "split", 10))
    resumed, resumed_info = run_loop(_loop(tmp_path / "split", 20))
    assert resumed_info["resumed_from_step"] == 10

    want, got = _carry(tmp_path / "whole", 20), _carry(tmp_path / "split", 20)
    assert len(want) == len(got)
    for i, (a, b) in enumerate(zip(want, got, strict=True)):
        assert a.tobytes() == b.tobytes(), f"carry leaf {i} differs"

    # The carry ends with the EMA of the 4 trained leaves; the op holds exactly those.
    op_leaves = leaves(whole)
    n = len(op_leaves)
    ema, params = want[-n:], want[:n]
    for a, b in zip(op_leaves, ema, strict=True):
        assert a.tobytes() == b.tobytes()
    assert any(not np.array_equal(a, b) for a, b in zip(op_leaves, params, strict=True))
    assert leaves(resumed)[0].tobytes() == op_leaves[0].tobytes()

    # Evaluation ran on the EMA weights: the op's accuracy is the reported one.
    accuracy = float((np.asarray(whole(VAL["x"])).argmax(-1) == VAL["y"]).mean())
    assert accuracy == pytest.approx(info["final_metrics"]["val_accuracy"], abs=1e-6)


def test_resume_with_another_ema_decay_is_refused_naming_it(tmp_path):
    run_loop(_loop(tmp_path / "c", 10))
    with pytest.raises(CheckpointError, match="ema_decay"):
        run_loop(_loop(tmp_path / "c", 20, ema_decay=0.5))


def test_ema_is_the_decayed_average_of_the_iterates():
    """With one step, EMA = d * initial + (1 - d) * trained (no bias correction)."""
    from _eqx_helpers import make_model

    initial = leaves(make_model())
    trained_plain, _ = run_loop(tiny_loop(max_steps=1))
    trained_ema, _ = run_loop(tiny_loop(max_steps=1, ema_decay=0.75))
    for e, p0, p1 in zip(leaves(trained_ema), initial, leaves(trained_plain), strict=True):
        np.testing.assert_allclose(e, 0.75 * p0 + 0.25 * p1, rtol=1e-6, atol=1e-7)
    assert jax.tree_util.tree_structure(trained_ema.module) == jax.tree_util.tree_structure(
        trained_plain.module
    )
