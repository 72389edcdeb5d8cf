"""Train a small CNN with batch normalisation on scikit-learn's digits (Equinox backend).

The model is stateful: ``eqx.nn.BatchNorm`` keeps running statistics in an
``eqx.nn.State``, built with ``eqx.nn.make_with_state``. The loop carries that
state, checkpoints it, and the trained op holds it (``op.state``) and predicts
in inference mode with it. The 8×8 digit images are read as ``1×8×8`` arrays.

Run with ``python examples/digits_cnn.py`` or
``pipekit-train run examples/digits_cnn.yaml``. Nothing is downloaded.
"""

from __future__ import annotations

import equinox as eqx
import jax
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from pipekit_train import Checkpoint, ProgressBar, TrainingLoop
from pipekit_train.adapters.equinox import JaxModelOp


def load_split(split: str = "train", test_fraction: float = 0.2, seed: int = 0) -> dict:
    """The ``split`` of digits as images: ``{"x": float32 [n, 1, 8, 8], "y": int32 [n]}``."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    y = digits.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return {"x": x_tr, "y": y_tr} if split == "train" else {"x": x_te, "y": y_te}


class DigitsCNN(eqx.Module):
    """conv3×3(1→c) · BN · relu · conv3×3 stride 2 (c→2c) · BN · relu · linear(→10)."""

    conv1: eqx.nn.Conv2d
    bn1: eqx.nn.BatchNorm
    conv2: eqx.nn.Conv2d
    bn2: eqx.nn.BatchNorm
    head: eqx.nn.Linear

    def __init__(self, channels: int = 16, *, key: jax.Array) -> None:
        k1, k2, k3 = jax.random.split(key, 3)
        self.conv1 = eqx.nn.Conv2d(1, channels, 3, padding=1, key=k1)
        self.bn1 = eqx.nn.BatchNorm(channels, axis_name="batch", mode="ema")
        self.conv2 = eqx.nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1, key=k2)
        self.bn2 = eqx.nn.BatchNorm(2 * channels, axis_name="batch", mode="ema")
        self.head = eqx.nn.Linear(2 * channels * 4 * 4, 10, key=k3)

    def __call__(self, x: jax.Array, state: eqx.nn.State) -> tuple[jax.Array, eqx.nn.State]:
        h, state = self.bn1(self.conv1(x), state)
        h, state = self.bn2(self.conv2(jax.nn.relu(h)), state)
        return self.head(jax.nn.relu(h).reshape(-1)), state


def make_model(channels: int = 16, seed: int = 0) -> JaxModelOp:
    """The CNN and its batch-norm state, wrapped so the op can be saved and loaded by name."""
    model, state = eqx.nn.make_with_state(DigitsCNN)(channels, key=jax.random.PRNGKey(seed))
    return JaxModelOp(
        model,
        state=state,
        factory="digits_cnn:make_model",
        factory_kwargs={"channels": channels, "seed": seed},
    )


def make_loop(**overrides: object) -> TrainingLoop:
    """The example's loop (the same as ``digits_cnn.yaml``), with fields overridden."""
    kwargs: dict = {
        "model_op": make_model(),
        "dataset": load_split("train"),
        "val_dataset": load_split("test"),
        "loss": "cross_entropy",
        "batch_size": 64,
        "max_steps": 400,
        "optimizer_config": {
            "name": "adam",
            "lr": {"schedule": "cosine_decay", "init_value": 3e-3},
        },
        "eval_every_n_steps": 200,
        "log_every_n_steps": 50,
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)


def main() -> None:
    loop = make_loop(
        checkpoint_dir="runs/digits_cnn/checkpoints",
        callbacks=[Checkpoint(every_n_steps=200, keep_last=2), ProgressBar()],
        metric_writer="jsonl:runs/digits_cnn/metrics.jsonl",
    )
    op, info = loop.run()
    print(
        f"val_accuracy (on val_dataset) {info['final_metrics']['val_accuracy']:.4f} "
        f"after {info['final_step']} steps in {info['total_seconds']:.1f} s"
    )
    op.save("runs/digits_cnn/model")


if __name__ == "__main__":
    main()
