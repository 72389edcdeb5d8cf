"""The Keras 3 reference: ``model.fit`` on the JAX backend, same MLP, data as numpy arrays.

``KERAS_BACKEND`` must be ``jax`` before Keras is first imported; ``benchmarks/run.py``
sets it at its top.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from _common import BATCH, LR


def _keras() -> Any:
    os.environ["KERAS_BACKEND"] = "jax"
    import keras

    if keras.backend.backend() != "jax":  # imported earlier under another backend
        raise RuntimeError(f"Keras runs on {keras.backend.backend()!r}, not 'jax'")
    return keras


def keras_version() -> str:
    return str(_keras().__version__)


def keras_seconds_per_step(
    data: dict[str, np.ndarray], *, steps_per_execution: int, epochs: int, tile: int = 1
) -> float:
    """Steady-state seconds per step of ``fit``: epochs 2..``epochs`` (the first compiles).

    The data is truncated to whole batches (Keras would otherwise run a ragged last
    batch, which is a second compilation and a smaller step; pipekit drops the
    remainder). ``tile`` repeats the data that many times, so one epoch is ``tile``
    times longer (fewer per-epoch costs: iterator set-up, shuffling, callbacks).
    """
    keras = _keras()
    n = (len(data["x"]) // BATCH) * BATCH
    x = np.tile(data["x"][:n], (tile, 1))
    y = np.tile(data["y"][:n], tile)
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.AdamW(learning_rate=LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=steps_per_execution,
    )

    class Stamps(keras.callbacks.Callback):
        def __init__(self) -> None:
            super().__init__()
            self.at: list[float] = []

        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            float((logs or {}).get("loss", 0.0))  # a host value: the device has finished
            self.at.append(time.perf_counter())

    stamps = Stamps()
    model.fit(x, y, batch_size=BATCH, epochs=epochs, verbose=0, callbacks=[stamps], shuffle=True)
    steps = (len(x) // BATCH) * (epochs - 1)
    return (stamps.at[-1] - stamps.at[0]) / steps


def keras_backend_seconds_per_step(
    data: dict[str, np.ndarray],
    *,
    start: int,
    window: int,
    log_every: int = 50,
    checkpoint_every: int | None = None,
    **features: Any,
) -> float:
    """Steps ``(start, start + window]`` of ``TrainingLoop(..., backend="keras").run()``.

    ``features`` are ``TrainingLoop`` feature fields (``accumulate_steps``, ``ema_decay``,
    ``precision``); steps are optimiser updates.

    The same Sequential as :func:`keras_seconds_per_step`, AdamW (lr 1e-3), cross-entropy
    on logits, batch 128, over core's batch order; timed by a pipekit callback at host
    events (each follows the bridge's fetch of the window's losses: a device sync).
    """
    import tempfile

    from _common import OPTIMIZER_CONFIG, Stamps

    from pipekit_train import Checkpoint, TrainingLoop

    keras = _keras()
    model = keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    stamps = Stamps()
    callbacks: list[Any] = [stamps]
    with tempfile.TemporaryDirectory(prefix="pipekit-bench-keras-") as tmp:
        if checkpoint_every is not None:
            callbacks.append(Checkpoint(every_n_steps=checkpoint_every, keep_last=2))
        TrainingLoop(
            model_op=model,
            dataset=data,
            loss="cross_entropy",
            batch_size=BATCH,
            max_steps=start + window,
            optimizer_config=dict(OPTIMIZER_CONFIG),
            callbacks=callbacks,
            checkpoint_dir=tmp if checkpoint_every is not None else None,
            log_every_n_steps=log_every,
            backend="keras",
            **features,
        ).run()
    return (stamps.at[start + window] - stamps.at[start]) / window
