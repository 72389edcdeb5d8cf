"""Lightning: labels are checked against the module's head under a classification loss.

The head's width is the last axis of the one forward (``torch.no_grad()``) the backend
already runs on a real batch to check that the data fits. Out-of-range labels, a
1-wide head under ``cross_entropy`` and fractional labels are refused before
``Trainer.fit``, naming the field; ``checkpoint_dir`` is left untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _lightning_helpers import data, loop, mlp

from pipekit_train.errors import ConfigError, DataError, PipekitError


def _refused(tmp_path: Path, error: type[PipekitError], **overrides: Any) -> PipekitError:
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    with pytest.raises(error) as info:
        loop(checkpoint_dir=str(run), **overrides).run()
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    assert (run / "notes.txt").read_text() == "mine"
    return info.value


def test_labels_out_of_range_of_the_head(no_fit, tmp_path) -> None:
    bad = data()
    bad["y"] = bad["y"].copy()
    bad["y"][11] = 3  # a 3-wide head: labels 0 … 2
    err = _refused(tmp_path, DataError, dataset=bad)
    assert "TrainingLoop.dataset['y']" in str(err) and "[0, 2]" in str(err)
    assert "row 11" in str(err)


def test_val_labels_out_of_range(no_fit, tmp_path) -> None:
    val = data(32, seed=1)
    val["y"] = val["y"] + 7
    err = _refused(tmp_path, DataError, val_dataset=val)
    assert "TrainingLoop.val_dataset['y']" in str(err)


def test_one_wide_head_under_cross_entropy(no_fit, tmp_path) -> None:
    err = _refused(tmp_path, ConfigError, model_op=mlp(classes=1))
    assert err.field == "model_op"
    assert "1 wide" in str(err) and "binary_cross_entropy" in str(err)


def test_fractional_labels(no_fit, tmp_path) -> None:
    bad = data()
    bad["y"] = bad["y"].astype(np.float32) + 0.25
    err = _refused(tmp_path, DataError, dataset=bad)
    assert "TrainingLoop.dataset['y']" in str(err) and "fractional" in str(err)
