"""Keras: labels are checked against the model's head, and x against its dtype, before fit.

Before this, labels out of range, a ``Dense(1)`` head under ``cross_entropy`` and
fractional labels trained to the end, and an object-dtype ``x`` died inside optree
during ``fit``. The head's width comes from the one eager call on a real batch that
already checks that the data fits the model. Files in ``checkpoint_dir`` stay as they were.
"""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError, DataError, PipekitError


@pytest.fixture()
def no_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    def fit(*args, **kwargs):
        raise AssertionError("keras fit was called; the error must be raised before it")

    monkeypatch.setattr(keras.Model, "fit", fit)


def _refused(tmp_path: Path, error: type[PipekitError], **overrides) -> PipekitError:
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    fields = dict(
        model_op=mlp(),
        dataset=digits(256),
        loss="cross_entropy",
        batch_size=32,
        max_steps=10,
        backend="keras",
        checkpoint_dir=str(run),
    )
    fields.update(overrides)
    with pytest.raises(error) as info:
        TrainingLoop(**fields).run()
    assert sorted(p.name for p in run.iterdir()) == ["notes.txt"]
    assert (run / "notes.txt").read_text() == "mine"
    return info.value


def test_labels_out_of_range_of_the_head(no_fit, tmp_path) -> None:
    data = digits(256)
    data["y"] = data["y"] + 5  # labels 5 … 14 for a 10-wide head
    err = _refused(tmp_path, DataError, dataset=data)
    assert "TrainingLoop.dataset['y']" in str(err) and "[0, 9]" in str(err)


def test_val_labels_out_of_range(no_fit, tmp_path) -> None:
    val = digits(64, offset=256)
    val["y"] = val["y"] * 3
    err = _refused(tmp_path, DataError, val_dataset=val)
    assert "TrainingLoop.val_dataset['y']" in str(err)


def test_dense_1_head_under_cross_entropy(no_fit, tmp_path) -> None:
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(1)])
    err = _refused(tmp_path, ConfigError, model_op=model)
    assert err.field == "model_op"
    assert "1 wide" in str(err) and "binary_cross_entropy" in str(err)


def test_fractional_labels(no_fit, tmp_path) -> None:
    data = digits(256)
    data["y"] = data["y"].astype(np.float32) / 10  # 0.0 … 0.9 under cross_entropy
    err = _refused(tmp_path, DataError, dataset=data)
    assert "TrainingLoop.dataset['y']" in str(err) and "fractional" in str(err)


def test_object_dtype_x(no_fit, tmp_path) -> None:
    data = digits(256)
    data["x"] = np.array(list(data["x"]) + [None], dtype=object)[:-1]
    err = _refused(tmp_path, DataError, dataset=data)
    assert "TrainingLoop.dataset['x']" in str(err) and "object" in str(err)


def test_ragged_x(no_fit, tmp_path) -> None:
    data = digits(256)
    ragged = [row if i % 2 else row[:-1] for i, row in enumerate(data["x"])]
    err = _refused(tmp_path, DataError, dataset={"x": ragged, "y": data["y"]})
    assert "TrainingLoop.dataset['x']" in str(err) and "ragged" in str(err)
