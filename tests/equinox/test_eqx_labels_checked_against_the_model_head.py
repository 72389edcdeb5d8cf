"""Labels are checked against the model's head under a classification loss, before compiling.

The head's width comes from ``eqx.filter_eval_shape`` of the model on one batch (traced,
not compiled): labels out of range, a 1-wide head under ``cross_entropy`` and fractional
labels are refused with the field and the fix, and files already in ``checkpoint_dir``
are left as they were.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from _eqx_helpers import make_data, make_model, run_loop, tiny_loop, watch_compilation

from pipekit_train import ConfigError, DataError, PipekitError


def _refused(monkeypatch, tmp_path: Path, error: type[PipekitError], **overrides) -> PipekitError:
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    with watch_compilation(monkeypatch) as watch:
        with pytest.raises(error) as info:
            run_loop(tiny_loop(checkpoint_dir=str(run), **overrides))
    assert not watch.anything, "the error came after the training step was compiled"
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    assert (run / "notes.txt").read_text() == "mine"
    return info.value


def test_labels_out_of_range_of_the_head(monkeypatch, tmp_path):
    data = make_data()
    data["y"] = data["y"].copy()
    data["y"][7] = 5  # a 3-wide head
    err = _refused(monkeypatch, tmp_path, DataError, dataset=data)
    assert "TrainingLoop.dataset['y']" in str(err) and "[0, 2]" in str(err) and "row 7" in str(err)


def test_negative_label_in_val_dataset(monkeypatch, tmp_path):
    val = make_data(32, seed=1)
    val["y"] = val["y"].copy()
    val["y"][0] = -1
    err = _refused(monkeypatch, tmp_path, DataError, val_dataset=val)
    assert "TrainingLoop.val_dataset['y']" in str(err)


def test_one_wide_head_under_cross_entropy(monkeypatch, tmp_path):
    err = _refused(monkeypatch, tmp_path, ConfigError, model_op=make_model(out_size=1))
    assert err.field == "model_op"
    assert "cross_entropy" in str(err) and "binary_cross_entropy" in str(err)


def test_fractional_labels_under_cross_entropy(monkeypatch, tmp_path):
    data = make_data()
    data["y"] = data["y"].astype(np.float32) + 0.5
    err = _refused(monkeypatch, tmp_path, DataError, dataset=data)
    assert "TrainingLoop.dataset['y']" in str(err) and "fractional" in str(err)


def test_binary_labels_outside_zero_one(monkeypatch, tmp_path):
    data = make_data()
    data["y"] = data["y"].astype(np.float32)[:, None] * 2  # values 0, 2, 4 for one logit
    err = _refused(
        monkeypatch,
        tmp_path,
        DataError,
        dataset=data,
        loss="binary_cross_entropy",
        model_op=make_model(out_size=1),
    )
    assert "TrainingLoop.dataset['y']" in str(err) and "[0, 1]" in str(err)
