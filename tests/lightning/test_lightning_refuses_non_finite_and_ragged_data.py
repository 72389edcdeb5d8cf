"""Lightning reads core's checked data: NaN, inf, object-dtype and ragged data are refused.

Before, its own copy of the data layer skipped the finiteness check (NaN trained) and an
object-dtype or ragged dataset ended in a raw ``TypeError``. Now each is a ``DataError``
naming the field, raised before ``Trainer.fit``, with ``checkpoint_dir`` untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
from _lightning_helpers import data, loop

from pipekit_train.errors import DataError


def _refused(tmp_path: Path, **overrides: Any) -> str:
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    with pytest.raises(DataError) as info:
        loop(checkpoint_dir=str(run), **overrides).run()
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    assert (run / "notes.txt").read_text() == "mine"
    return str(info.value)


def test_nan_in_x(no_fit, tmp_path) -> None:
    bad = data()
    bad["x"][5, 2] = np.nan
    msg = _refused(tmp_path, dataset=bad)
    assert "TrainingLoop.dataset['x']" in msg and "row 5" in msg and "NaN" in msg


def test_inf_in_val_dataset(no_fit, tmp_path) -> None:
    val = data(32, seed=1)
    val["x"][3, 0] = np.inf
    msg = _refused(tmp_path, val_dataset=val)
    assert "TrainingLoop.val_dataset['x']" in msg and "row 3" in msg


def test_nan_in_a_tensor_dataset_of_records(no_fit, tmp_path) -> None:
    d = data()
    x = torch.from_numpy(d["x"])
    x[9, 1] = float("nan")
    records = torch.utils.data.TensorDataset(x, torch.from_numpy(d["y"]))
    msg = _refused(tmp_path, dataset=records)
    assert "TrainingLoop.dataset['x']" in msg and "record 9" in msg


def test_object_dtype_x(no_fit, tmp_path) -> None:
    d = data()
    column = np.empty(len(d["x"]), dtype=object)
    column[:] = list(d["x"])
    msg = _refused(tmp_path, dataset={"x": column, "y": d["y"]})
    assert "TrainingLoop.dataset['x']" in msg and "object" in msg


def test_ragged_x(no_fit, tmp_path) -> None:
    d = data()
    ragged = [row if i % 3 else row[:-1] for i, row in enumerate(d["x"])]
    msg = _refused(tmp_path, dataset={"x": ragged, "y": d["y"]})
    assert "TrainingLoop.dataset['x']" in msg and "ragged" in msg
