"""Train the digits MLP of ``digits_mlp.py`` with the Keras 3 backend (JAX, no TensorFlow).

Run the Python version with ``python examples/digits_keras.py``, or the YAML version
with ``pipekit-train run examples/digits_keras.yaml``. Same data split, model shape
(64 → 256 → 256 → 10, ReLU), loss, optimiser and step budget as the Equinox example;
the model is a plain ``keras.Sequential``.
"""

from __future__ import annotations

import os

os.environ.setdefault("KERAS_BACKEND", "jax")  # before anything imports Keras

import keras  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

from pipekit_train import Checkpoint, ProgressBar, TrainingLoop  # noqa: E402
from pipekit_train.adapters.keras import KerasModelOp  # noqa: E402

__all__ = ["load_split", "make_model", "main"]


def load_split(split: str = "train", test_fraction: float = 0.2, seed: int = 0) -> dict:
    """The same split as ``digits_mlp.load_split`` (repeated: that module needs Equinox)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return {"x": x_tr, "y": y_tr} if split == "train" else {"x": x_te, "y": y_te}


def make_model(hidden: int = 256, depth: int = 2, seed: int = 0) -> KerasModelOp:
    """An MLP 64 → hidden × depth → 10 logits, initialised from ``seed``."""
    keras.utils.set_random_seed(seed)
    layers = [keras.Input((64,))]
    layers += [keras.layers.Dense(hidden, activation="relu") for _ in range(depth)]
    layers.append(keras.layers.Dense(10))
    return KerasModelOp(keras.Sequential(layers, name="digits_mlp"))


def main() -> None:
    loop = TrainingLoop(
        model_op=make_model(),
        dataset=load_split("train"),
        val_dataset=load_split("test"),
        loss="cross_entropy",
        batch_size=128,
        max_steps=1500,
        optimizer_config={
            "name": "adamw",
            "lr": {"schedule": "cosine_decay", "init_value": 1e-3},
            "weight_decay": 1e-2,
        },
        eval_every_n_steps=500,
        checkpoint_dir="runs/digits_keras/checkpoints",
        callbacks=[Checkpoint(every_n_steps=500, keep_last=2), ProgressBar()],
        metric_writer="jsonl:runs/digits_keras/metrics.jsonl",
        backend="keras",
    )
    op, info = loop.run()
    print(
        f"test accuracy {info['final_metrics']['val_accuracy']:.4f} "
        f"after {info['final_step']} steps in {info['total_seconds']:.1f} s"
    )
    op.save("runs/digits_keras/model")


if __name__ == "__main__":
    main()
