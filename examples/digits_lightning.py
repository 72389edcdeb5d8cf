"""Train the digits MLP (64 → 256 → 256 → 10, as ``examples/digits_mlp.py``) with Lightning.

Run the Python version with ``python examples/digits_lightning.py``, or the YAML
version with ``pipekit-train run examples/digits_lightning.yaml``. The data ships
inside scikit-learn; nothing is downloaded. Needs ``pip install pipekit-train-lightning``.
"""

from __future__ import annotations

import numpy as np
import torch
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from pipekit_train import Checkpoint, ProgressBar, TrainingLoop
from pipekit_train.adapters.lightning import TorchModelOp


def load_split(split: str = "train", test_fraction: float = 0.2, seed: int = 0) -> dict:
    """The ``split`` ("train" or "test") of digits: ``{"x": float32 [n, 64], "y": int64 [n]}``."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_fraction, random_state=seed, stratify=y
    )
    return {"x": x_tr, "y": y_tr} if split == "train" else {"x": x_te, "y": y_te}


def make_model(hidden: int = 256, depth: int = 2, seed: int = 0) -> TorchModelOp:
    """An MLP 64 → hidden × depth → 10 (ReLU), saved and loaded by this import string."""
    torch.manual_seed(seed)
    layers: list[torch.nn.Module] = []
    width = 64
    for _ in range(depth):
        layers += [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
        width = hidden
    layers.append(torch.nn.Linear(width, 10))
    return TorchModelOp(
        torch.nn.Sequential(*layers),
        factory="digits_lightning:make_model",
        factory_kwargs={"hidden": hidden, "depth": depth, "seed": seed},
    )


def main() -> None:
    loop = TrainingLoop(
        backend="lightning",
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
        checkpoint_dir="runs/digits_lightning/checkpoints",
        callbacks=[Checkpoint(every_n_steps=500, keep_last=2), ProgressBar()],
        metric_writer="jsonl:runs/digits_lightning/metrics.jsonl",
    )
    op, info = loop.run()
    print(
        f"val_accuracy (on val_dataset) {info['final_metrics']['val_accuracy']:.4f} "
        f"after {info['final_step']} steps in {info['total_seconds']:.1f} s"
    )
    op.save("runs/digits_lightning/model")


if __name__ == "__main__":
    main()
