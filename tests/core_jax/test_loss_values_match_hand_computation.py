"""The JAX loss implementations agree with NumPy computations written out by hand."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest

from pipekit_train.jax.losses import is_classification, resolve_accuracy, resolve_loss
from pipekit_train.losses import CLASSIFICATION_LOSSES, LOSS_NAMES

LOGITS = np.array([[2.0, 1.0, 0.0], [0.0, 0.0, 3.0], [1.0, 4.0, -1.0]], dtype=np.float32)
LABELS = np.array([0, 2, 0])


def softmax_xent_by_hand(logits, labels):
    total = 0.0
    for row, label in zip(logits.astype(np.float64), labels, strict=True):
        log_z = np.log(np.sum(np.exp(row)))
        total += log_z - row[label]
    return total / len(labels)


def approx(x):
    return pytest.approx(x, rel=1e-5, abs=1e-6)


def test_cross_entropy_integer_labels():
    loss = resolve_loss("cross_entropy")
    assert float(loss(LOGITS, LABELS)) == approx(softmax_xent_by_hand(LOGITS, LABELS))


def test_cross_entropy_one_hot_float_labels():
    one_hot = np.eye(3, dtype=np.float32)[LABELS]
    loss = resolve_loss("cross_entropy")
    assert float(loss(jnp.asarray(LOGITS), jnp.asarray(one_hot))) == approx(
        softmax_xent_by_hand(LOGITS, LABELS)
    )


def test_cross_entropy_column_and_float_class_labels():
    loss = resolve_loss("cross_entropy")
    expected = softmax_xent_by_hand(LOGITS, LABELS)
    assert float(loss(LOGITS, LABELS[:, None])) == approx(expected)
    assert float(loss(LOGITS, LABELS.astype(np.float32))) == approx(expected)


def test_binary_cross_entropy_from_logits():
    z = np.array([0.0, 2.0, -1.0, 3.0], dtype=np.float32)
    y = np.array([0.0, 1.0, 1.0, 0.0], dtype=np.float32)
    terms = [
        np.log1p(np.exp(-zi)) if yi == 1 else np.log1p(np.exp(zi))
        for zi, yi in zip(z, y, strict=True)
    ]
    by_hand = np.mean(terms)
    loss = resolve_loss("binary_cross_entropy")
    assert float(loss(z, y)) == approx(by_hand)
    # (batch, 1) logits against (batch,) integer labels do not broadcast to (batch, batch)
    assert float(loss(z[:, None], y.astype(np.int32))) == approx(by_hand)


PRED = np.array([0.0, 1.0, 3.0, -2.0], dtype=np.float32)
TARGET = np.array([0.0, 0.0, 0.5, -1.5], dtype=np.float32)  # errors 0, 1, 2.5, -0.5


@pytest.mark.parametrize(
    ("name", "by_hand"),
    [
        ("mse", (0 + 1 + 6.25 + 0.25) / 4),
        ("mae", (0 + 1 + 2.5 + 0.5) / 4),
        # quadratic 0.5*e^2 inside |e| <= 1, linear |e| - 0.5 outside
        ("huber", (0 + 0.5 + (2.5 - 0.5) + 0.5 * 0.25) / 4),
    ],
)
def test_regression_losses(name, by_hand):
    loss = resolve_loss(name)
    assert float(loss(PRED, TARGET)) == approx(by_hand)
    assert float(loss(PRED[:, None], TARGET)) == approx(by_hand)  # trailing 1 aligned
    assert float(loss(PRED, TARGET[:, None])) == approx(by_hand)


def test_integer_regression_targets_are_cast():
    assert float(resolve_loss("mse")(PRED, TARGET.astype(np.int32))) == approx(
        np.mean((PRED - TARGET.astype(np.int32)) ** 2)
    )


def test_classification_names():
    assert set(CLASSIFICATION_LOSSES) == {"cross_entropy", "binary_cross_entropy"}
    assert [n for n in LOSS_NAMES if is_classification(n)] == [
        "cross_entropy",
        "binary_cross_entropy",
    ]
    assert not is_classification("mse")
    assert not is_classification(lambda p, t: 0.0)


def test_accuracy_for_classification_losses():
    acc = resolve_accuracy("cross_entropy")
    assert float(acc(LOGITS, np.array([0, 2, 2]))) == approx(2 / 3)
    assert float(acc(LOGITS, np.eye(3, dtype=np.float32)[[0, 2, 1]])) == approx(1.0)
    bacc = resolve_accuracy("binary_cross_entropy")
    assert float(bacc(np.array([[1.0], [-1.0]]), np.array([1, 1]))) == approx(0.5)
    assert resolve_accuracy("mse") is None


def test_callable_loss_is_returned_unchanged():
    def mine(pred, target):
        return jnp.sum(pred)

    assert resolve_loss(mine) is mine
