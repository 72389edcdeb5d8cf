"""The example CNN with ``eqx.nn.BatchNorm`` trains through the loop and its op round-trips.

``examples/digits_cnn.py``: ``Conv2d`` + ``BatchNorm`` on digits as 1×8×8 images, a
stateful model built with ``eqx.nn.make_with_state``. Trained for the example's
400 steps (about 10 s here) it must reach at least 0.96 accuracy on the held-out
20 % split, both as the loop's evaluation reports it and as the returned op
predicts it (inference mode, trained batch-norm statistics). The op holds the
state, saves it without pickle, and the reloaded op predicts the same bits.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from _cnn_example import digits_cnn
from _eqx_helpers import compilation_cache_dir, run_loop

from pipekit_train.adapters.equinox import JaxModelOp


@pytest.fixture(scope="module")
def trained():
    loop = digits_cnn.make_loop(backend_options={"compilation_cache": compilation_cache_dir()})
    return run_loop(loop)


def test_cnn_reaches_96_percent_on_the_held_out_split(trained):
    op, info = trained
    assert info["final_step"] == 400
    assert info["features"]["stateful_model"] is True
    assert info["final_metrics"]["val_accuracy"] >= 0.96
    test = digits_cnn.load_split("test")
    accuracy = float((np.asarray(op(test["x"])).argmax(-1) == test["y"]).mean())
    assert accuracy >= 0.96, accuracy
    assert abs(accuracy - info["final_metrics"]["val_accuracy"]) < 1e-6


def test_trained_op_carries_updated_batchnorm_statistics(trained):
    op, _ = trained
    fresh = digits_cnn.make_model()
    assert op.state is not None
    before = [np.asarray(x) for x in _state_leaves(fresh.state)]
    after = [np.asarray(x) for x in _state_leaves(op.state)]
    assert len(before) == len(after) > 0
    assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_saved_op_reloads_by_factory_and_predicts_the_same(trained, tmp_path):
    op, _ = trained
    op.save(tmp_path / "cnn")
    assert {p.name for p in (tmp_path / "cnn").iterdir()} == {"weights.eqx", "state.eqx", "op.json"}
    loaded = JaxModelOp.load(tmp_path / "cnn", trusted=True)
    x = digits_cnn.load_split("test")["x"]
    assert np.asarray(loaded(x)).tobytes() == np.asarray(op(x)).tobytes()


def _state_leaves(state):
    return jax.tree_util.tree_leaves(state)
