"""``compile(loss="crossentropy")`` on a target/output pair the cross-entropy Keras picks
from their shapes cannot take — multi-label 0/1 targets against a ``(n, 1)`` sigmoid,
one-hot targets of fewer classes than the softmax, two class ids per row — is refused by
Keras' own ``fit`` (a ``ValueError`` at the first batch). The loop refuses each before JAX
compiles anything, with ``checkpoint_dir`` untouched: a ``ConfigError`` on ``model_op``
that names the compiled loss, the cross-entropy it became for these shapes, and which
shapes pick each cross-entropy. A pair Keras takes (the positive control) trains."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
from _keras_helpers import digits
from compile_watch import compiles
from user_files import plant, snapshot

from pipekit_train import TrainingLoop
from pipekit_train.errors import ConfigError

DATA = digits(64)
ROWS = len(DATA["x"])


def _model(width: int, activation: str, loss: str = "crossentropy") -> keras.Model:
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(width, activation=activation)])
    model.compile(optimizer="adam", loss=loss)
    return model


CASES = {  # (output width, activation, targets, the cross-entropy Keras picks)
    "multi-label targets against a sigmoid of width 1": (
        1,
        "sigmoid",
        (np.arange(ROWS * 5).reshape(ROWS, 5) % 2).astype("float32"),
        "binary_crossentropy",
    ),
    "one-hot targets of 5 classes against a softmax of 10": (
        10,
        "softmax",
        keras.utils.to_categorical(DATA["y"] % 5, 5),
        "categorical_crossentropy",
    ),
    "two class ids per row": (
        10,
        "softmax",
        np.stack([DATA["y"], DATA["y"]], axis=1)[..., None],
        "sparse_categorical_crossentropy",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_pair_keras_refuses_is_config_error_before_compiling(tmp_path: Path, case: str) -> None:
    width, activation, y, picked = CASES[case]
    with pytest.raises(ValueError, match="must have the same shape"):  # Keras' own fit
        _model(width, activation).fit(DATA["x"], y, batch_size=16, epochs=1, verbose=0)

    for loss in ("crossentropy", "ce", "CE"):  # compared lower-cased, as Keras does
        model = _model(width, activation, loss)  # built outside the watch
        run_dir = tmp_path / loss
        plant(run_dir)
        before = snapshot(run_dir)
        loop = TrainingLoop(
            model_op=model,
            dataset={"x": DATA["x"], "y": y},
            batch_size=16,
            max_steps=2,
            checkpoint_dir=str(run_dir),
            backend="keras",
        )
        with compiles() as seen, pytest.raises(ConfigError) as info:
            loop.run()
        message = str(info.value)
        assert info.value.field == "model_op", message
        assert f"compile()d with ({loss!r})" in message, message
        assert f"becomes {picked} for targets of shape {y[:16].shape}" in message, message
        assert f"output (16, {width})" in message, message
        for works in ("binary_crossentropy when", "sparse_categorical_crossentropy when"):
            assert works in message, message
        assert not seen, f"compiled before the error: {seen}"
        assert snapshot(run_dir) == before


def test_the_watch_sees_a_pair_keras_takes_train() -> None:
    model = _model(10, "softmax")
    with compiles() as seen:
        _, info = TrainingLoop(
            model_op=model, dataset=DATA, batch_size=16, max_steps=2, backend="keras"
        ).run()
    assert info["final_step"] == 2 and seen
