"""Data whose shape does not fit the model → ``DataError`` before fit (model run on one batch)."""

from __future__ import annotations

import numpy as np
import pytest
from _lightning_helpers import data, loop

from pipekit_train.errors import DataError


def test_train_features_that_do_not_fit_the_first_layer(no_fit) -> None:
    with pytest.raises(DataError, match=r"TrainingLoop.dataset does not fit the model.*\[16, 5\]"):
        loop(dataset=data(features=5)).run()


def test_val_dataset_that_does_not_fit(no_fit) -> None:
    with pytest.raises(DataError, match="TrainingLoop.val_dataset does not fit the model"):
        loop(val_dataset=data(features=7)).run()


def test_labels_the_loss_cannot_take(no_fit) -> None:
    bad = data()
    bad["y"] = np.zeros((len(bad["x"]), 4), np.float32)  # 4 "classes" for a 3-logit model
    with pytest.raises(DataError, match="the loss fails on the model's output"):
        loop(dataset=bad).run()


def test_fewer_examples_than_batch_size(no_fit) -> None:
    with pytest.raises(DataError, match="fewer than batch_size"):
        loop(dataset=data(n=8)).run()


def test_ragged_dataset(no_fit) -> None:
    bad = data()
    bad["y"] = bad["y"][:-1]
    with pytest.raises(DataError, match="different lengths"):
        loop(dataset=bad).run()
