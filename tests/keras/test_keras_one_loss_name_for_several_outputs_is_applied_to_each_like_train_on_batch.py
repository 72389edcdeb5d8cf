"""A model with several outputs compiled with ONE loss, ``compile(loss="mse")``: Keras applies
that loss to every output and sums them (the functional-API guide's multi-output model with
a single loss, https://keras.io/guides/functional_api/). The loop trains it as compiled, on
dict targets, and its weights equal ``train_on_batch`` on the same batches from the same
weights. Before, the pre-training check called the one loss on the dict of outputs and
raised ``AttributeError: 'dict' object has no attribute 'shape'``.
"""

from __future__ import annotations

import keras
import numpy as np

from pipekit_train import TrainingLoop
from pipekit_train.engine import BatchSource

ROWS, BATCH, STEPS = 96, 16, 4


def _two_outputs() -> keras.Model:
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(4,), name="features")
    h = keras.layers.Dense(8, activation="relu")(inputs)
    outputs = {"score": keras.layers.Dense(1, name="score")(h)}
    outputs["embedding"] = keras.layers.Dense(2, name="embedding")(h)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    return model


def test_one_compiled_loss_is_applied_to_each_output_like_train_on_batch() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, 4)).astype("float32")
    y = {
        "score": rng.normal(size=(ROWS, 1)).astype("float32"),
        "embedding": rng.normal(size=(ROWS, 2)).astype("float32"),
    }
    model = _two_outputs()
    _, info = TrainingLoop(
        backend="keras",
        model_op=model,
        dataset={"x": x, "y": y},
        batch_size=BATCH,
        max_steps=STEPS,
        seed=0,
    ).run()
    assert info["final_step"] == STEPS

    plain = _two_outputs()
    rows = BatchSource({"x": np.arange(ROWS)}, BATCH, 0)  # the loop's row order (seed 0)
    for step in range(STEPS):
        take = rows[step]["x"]
        plain.train_on_batch(x[take], {k: v[take] for k, v in y.items()})
    for ours, theirs in zip(model.trainable_variables, plain.trainable_variables, strict=True):
        np.testing.assert_allclose(np.asarray(ours.value), np.asarray(theirs.value), atol=1e-6)
