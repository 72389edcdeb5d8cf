"""The Keras 3 reference: ``model.fit`` on the JAX backend, same MLP, data as numpy arrays.

``KERAS_BACKEND`` must be ``jax`` before Keras is first imported; ``benchmarks/run.py``
sets it at its top.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
from _data import BATCH, LR, OPTIMIZER_CONFIG


def _keras() -> Any:
    os.environ["KERAS_BACKEND"] = "jax"
    import keras

    if keras.backend.backend() != "jax":  # imported earlier under another backend
        raise RuntimeError(f"Keras runs on {keras.backend.backend()!r}, not 'jax'")
    return keras


def keras_version() -> str:
    return str(_keras().__version__)


def keras_model() -> Any:
    """The Sequential of these cases: Dense 256 relu ×2, Dense 10 (logits)."""
    keras = _keras()
    return keras.Sequential(
        [
            keras.Input((64,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(10),
        ]
    )


def plain_fit(
    data: dict[str, np.ndarray],
    *,
    epochs: int,
    on_epoch_end: Any = None,
    steps_per_execution: int = 1,
    tile: int = 1,
) -> int:
    """The plain Keras script: compile, ``fit(shuffle=True, verbose=0)``; returns steps/epoch.

    The data is truncated to whole batches (Keras would otherwise run a ragged last
    batch, which is a second compilation and a smaller step; pipekit drops the
    remainder). ``tile`` repeats the data that many times. ``on_epoch_end(epoch)`` runs
    after each epoch's host-side loss (the device has finished).
    """
    keras = _keras()
    n = (len(data["x"]) // BATCH) * BATCH
    x = np.tile(data["x"][:n], (tile, 1))
    y = np.tile(data["y"][:n], tile)
    model = keras_model()
    model.compile(
        optimizer=keras.optimizers.AdamW(learning_rate=LR),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        steps_per_execution=steps_per_execution,
    )

    class Hook(keras.callbacks.Callback):
        def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
            float((logs or {}).get("loss", 0.0))  # a host value: the device has finished
            if on_epoch_end is not None:
                on_epoch_end(epoch)

    model.fit(x, y, batch_size=BATCH, epochs=epochs, verbose=0, callbacks=[Hook()], shuffle=True)
    return len(x) // BATCH


def keras_seconds_per_step(
    data: dict[str, np.ndarray], *, steps_per_execution: int, epochs: int, tile: int = 1
) -> float:
    """Steady-state seconds per step of ``fit``: epochs 2..``epochs`` (the first compiles).

    ``tile`` repeats the data that many times, so one epoch is ``tile`` times longer (fewer
    per-epoch costs: iterator set-up, shuffling, callbacks).
    """
    at: list[float] = []
    per_epoch = plain_fit(
        data,
        epochs=epochs,
        on_epoch_end=lambda _: at.append(time.perf_counter()),
        steps_per_execution=steps_per_execution,
        tile=tile,
    )
    return (at[-1] - at[0]) / (per_epoch * (epochs - 1))


def backend_loop(
    data: dict[str, np.ndarray],
    *,
    max_steps: int,
    callbacks: list[Any],
    log_every: int = 50,
    checkpoint_dir: str | None = None,
    cache_dir: str | None = None,
    **features: Any,
) -> Any:
    """``TrainingLoop(..., backend="keras")`` on :func:`keras_model`, AdamW, cross-entropy."""
    from pipekit_train import TrainingLoop

    return TrainingLoop(
        model_op=keras_model(),
        dataset=data,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=max_steps,
        optimizer_config=dict(OPTIMIZER_CONFIG),
        callbacks=callbacks,
        checkpoint_dir=checkpoint_dir,
        log_every_n_steps=log_every,
        backend="keras",
        backend_options={"compilation_cache": cache_dir} if cache_dir else {},
        **features,
    )


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

    from _common import Stamps

    from pipekit_train import Checkpoint

    stamps = Stamps()
    callbacks: list[Any] = [stamps]
    with tempfile.TemporaryDirectory(prefix="pipekit-bench-keras-") as tmp:
        if checkpoint_every is not None:
            callbacks.append(Checkpoint(every_n_steps=checkpoint_every, keep_last=2))
        backend_loop(
            data,
            max_steps=start + window,
            callbacks=callbacks,
            checkpoint_dir=tmp if checkpoint_every is not None else None,
            log_every=log_every,
            **features,
        ).run()
    return (stamps.at[start + window] - stamps.at[start]) / window
