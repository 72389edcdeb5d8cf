"""pipekit picks the cross-entropy for ``compile(loss="crossentropy")`` by the rule Keras'
``compile`` applies at the first batch (``is_binary_or_sparse_categorical`` in
keras/src/trainers/compile_utils.py, read here from the installed Keras): for every pair
of target and output shapes below, ranks 1 to 3 and last axes of 1, 3 and 5, both pick the
same loss function. A Keras that changed its rule fails this test, not a user's run."""

from __future__ import annotations

import itertools

from keras.src.trainers import compile_utils

from pipekit_train.adapters.keras._losses import crossentropy_by_shapes


def _keras_pick(target_shape: tuple[int, ...], pred_shape: tuple[int, ...]) -> str:
    class Shaped:
        def __init__(self, shape: tuple[int, ...]) -> None:
            self.shape = shape

    is_binary, is_sparse = compile_utils.is_binary_or_sparse_categorical(
        Shaped(target_shape), Shaped(pred_shape)
    )
    if is_binary:
        return "binary_crossentropy"
    if is_sparse:
        return "sparse_categorical_crossentropy"
    return "categorical_crossentropy"


def _shapes() -> list[tuple[int, ...]]:
    return [(8,) * (rank - 1) + (last,) for rank in (1, 2, 3) for last in (1, 3, 5)]


def test_every_shape_pair_picks_the_loss_keras_picks() -> None:
    picked = set()
    for target, pred in itertools.product(_shapes(), _shapes()):
        ours = crossentropy_by_shapes(target, pred)
        assert ours == _keras_pick(target, pred), (target, pred, ours)
        picked.add(ours)
    assert picked == {
        "binary_crossentropy",
        "sparse_categorical_crossentropy",
        "categorical_crossentropy",
    }
