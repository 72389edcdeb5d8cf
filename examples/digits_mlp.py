"""Train an MLP on scikit-learn's digits with the Equinox backend.

Run the Python version with ``python examples/digits_mlp.py``, or the YAML
version (the README's main command) with
``pipekit-train run examples/digits_mlp.yaml``. The data ships inside
scikit-learn; nothing is downloaded.
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
    """The ``split`` ("train" or "test") of digits: ``{"x": float32 [n, 64], "y": int32 [n]}``."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return {"x": x_tr, "y": y_tr} if split == "train" else {"x": x_te, "y": y_te}


def make_model(hidden: int = 256, depth: int = 2, seed: int = 0) -> JaxModelOp:
    """An MLP 64 → hidden × depth → 10, wrapped so it can be saved and loaded by name."""
    module = eqx.nn.MLP(64, 10, hidden, depth, key=jax.random.PRNGKey(seed))
    return JaxModelOp(
        module,
        factory="digits_mlp:make_model",
        factory_kwargs={"hidden": hidden, "depth": depth, "seed": seed},
    )


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
        checkpoint_dir="runs/digits_mlp/checkpoints",
        callbacks=[Checkpoint(every_n_steps=500, keep_last=2), ProgressBar()],
        metric_writer="jsonl:runs/digits_mlp/metrics.jsonl",
    )
    op, info = loop.run()
    print(
        f"val_accuracy (on val_dataset) {info['final_metrics']['val_accuracy']:.4f} "
        f"after {info['final_step']} steps in {info['total_seconds']:.1f} s"
    )
    op.save("runs/digits_mlp/model")


if __name__ == "__main__":
    main()
