"""The "Training & evaluation with the built-in methods" guide's digits model, trained by
plain ``fit`` and by the loop on the same batches, with the user's own Keras callbacks.

(Source: https://keras.io/guides/training_with_built_in_methods/ — the MNIST MLP compiled
with RMSprop, ``SparseCategoricalCrossentropy`` and ``SparseCategoricalAccuracy``;
shrunk to scikit-learn's 8x8 digits.) ``fit`` reads an infinite ``PyDataset`` of the
loop's own batches (``BatchSource`` row order, step ``i`` = batch ``i``) with
``steps_per_epoch`` = the loop's epoch, so both see the same data in the same order.
"""

from __future__ import annotations

import os
from typing import Any

os.environ.setdefault("KERAS_BACKEND", "jax")

import keras  # noqa: E402
import numpy as np  # noqa: E402
from _keras_helpers import digits  # noqa: E402
from keras import layers  # noqa: E402

from pipekit_train import TrainingLoop  # noqa: E402
from pipekit_train.engine import BatchSource  # noqa: E402

TRAIN, VAL, BATCH, SEED, EPOCHS = digits(1000), digits(300, offset=1400), 100, 0, 30
STEPS_PER_EPOCH = 1000 // BATCH


def guide_model(learning_rate: float) -> keras.Model:
    keras.utils.set_random_seed(0)
    inputs = keras.Input(shape=(64,), name="digits")
    x = layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = layers.Dense(10, activation="softmax", name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(
        optimizer=keras.optimizers.RMSprop(learning_rate=learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )
    return model


class EpochRecorder(keras.callbacks.Callback):
    """Each epoch end the callbacks see: (epoch, val_loss, the optimiser's rate)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[int, float, float]] = []

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        rate = float(keras.ops.convert_to_numpy(self.model.optimizer.learning_rate))
        self.rows.append((epoch, float(logs["val_loss"]), rate))


class LoopBatches(keras.utils.PyDataset):
    """Batch ``i`` of the loop's order, for ever (``fit`` asks for 0 twice: its peek)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows = BatchSource({"x": np.arange(len(TRAIN["x"]))}, BATCH, SEED)

    @property
    def num_batches(self) -> None:
        return None

    def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        take = self.rows[index]["x"]
        return TRAIN["x"][take], TRAIN["y"][take]


def run_fit(model: keras.Model, callbacks: list[Any]) -> Any:
    return model.fit(
        LoopBatches(),
        epochs=EPOCHS,
        steps_per_epoch=STEPS_PER_EPOCH,
        validation_data=(VAL["x"], VAL["y"]),
        callbacks=callbacks,
        shuffle=False,
        verbose=0,
    )


def run_loop(model: keras.Model, keras_callbacks: list[Any], **fields: Any) -> tuple[Any, dict]:
    return TrainingLoop(
        model_op=model,
        dataset=TRAIN,
        val_dataset=VAL,
        batch_size=BATCH,
        max_steps=EPOCHS * STEPS_PER_EPOCH,
        seed=SEED,
        backend="keras",
        backend_options={"callbacks": keras_callbacks},
        **fields,
    ).run()
