"""Equinox's MNIST CNN example trains as its users wrote it (issue 36, item 8).

The CNN of Equinox's docs (``examples/mnist.ipynb``: ``Conv2d`` · ``MaxPool2d`` · relu ·
``jnp.ravel`` · MLP · ``log_softmax``, a list of layers and plain functions), its own
loss (``cross_entropy`` of the log-softmax output, gathered with
``take_along_axis``), ``optax.adamw`` and its ``make_step`` (``eqx.filter_jit``,
``eqx.filter_value_and_grad``, ``eqx.apply_updates``). Shrunk to scikit-learn's 8×8
digits (so the first ``Linear`` takes 3·4·4 = 48 features, and the MLP is narrower);
no download. Through the backend (the user's loss as a task, the user's optax object)
the final parameters and every step's loss equal the notebook's own loop bit for bit,
and the trained op predicts with the trained CNN.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
from _hand_loop import assert_same_bits, hand_loop
from sklearn.datasets import load_digits

from pipekit_train import Callback, TrainingLoop

STEPS, BATCH, SEED, LEARNING_RATE = 10, 32, 5678, 3e-4


class CNN(eqx.Module):
    layers: list

    def __init__(self, key):
        key1, key2, key3, key4 = jax.random.split(key, 4)
        # Standard CNN setup: convolutional layer, followed by flattening,
        # with a small MLP on top.
        self.layers = [
            eqx.nn.Conv2d(1, 3, kernel_size=4, key=key1),
            eqx.nn.MaxPool2d(kernel_size=2),
            jax.nn.relu,
            jnp.ravel,
            eqx.nn.Linear(48, 64, key=key2),
            jax.nn.sigmoid,
            eqx.nn.Linear(64, 32, key=key3),
            jax.nn.relu,
            eqx.nn.Linear(32, 10, key=key4),
            jax.nn.log_softmax,
        ]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def loss(model, x, y):
    # Our input has the shape (BATCH_SIZE, 1, 8, 8), but our model operates on
    # a single input input image of shape (1, 8, 8).
    pred_y = jax.vmap(model)(x)
    return cross_entropy(y, pred_y)


def cross_entropy(y, pred_y):
    # y are the true targets, and should be integers 0-9.
    # pred_y are the log-softmax'd predictions.
    pred_y = jnp.take_along_axis(pred_y, jnp.expand_dims(y, 1), axis=1)
    return -jnp.mean(pred_y)


class Task:
    def loss_fn(self, model, batch, key):
        return loss(model, batch["x"], batch["y"]), {}


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state):
        self.loss.extend(state.window["loss"])


def digits() -> dict[str, np.ndarray]:
    d = load_digits()
    x = (d.data / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    return {"x": x[:256], "y": d.target[:256].astype(np.int32)}


def test_mnist_cnn_equals_its_own_loop() -> None:
    data = digits()
    key = jax.random.PRNGKey(SEED)
    want, _, want_losses = hand_loop(
        CNN(key), optax.adamw(LEARNING_RATE), data, loss, steps=STEPS, batch=BATCH, seed=0
    )
    rec = Losses()
    op, _ = TrainingLoop(
        model_op=CNN(key),
        dataset=data,
        task=Task(),
        batch_size=BATCH,
        max_steps=STEPS,
        log_every_n_steps=5,
        optimizer_config=optax.adamw(LEARNING_RATE),
        callbacks=[rec],
        seed=0,
        # One compiled call per step, as the notebook's make_step: XLA's CPU code for a
        # convolution inside the fused lax.scan differs in the last bit (~1e-8).
        backend_options={"steps_per_call": 1},
    ).run()
    assert_same_bits(op.module, want)
    assert rec.loss == want_losses
    np.testing.assert_allclose(
        np.asarray(op(data["x"][:8])), np.asarray(jax.vmap(want)(data["x"][:8])), rtol=1e-6
    )
