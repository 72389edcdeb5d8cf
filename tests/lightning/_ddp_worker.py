"""A job for the DDP test: ``python _ddp_worker.py OUT_DIR DEVICES``.

With DEVICES=2 Lightning's DDP launcher re-runs this script as a second process
(CPU, gloo); each rank writes its final state_dict and final metrics to
``OUT_DIR/rank<r>.npz``. With DEVICES=1 it is the one-process reference on the
same global batches.

Both checkpoint by time (``Checkpoint(every_n_seconds=…)``) into ``OUT_DIR/ckpt``, with
rank 0's interval tiny (a save at every log step) and the other ranks' huge: only rank 0's
clock decides (the strategy's broadcast), so every rank must record the same saves.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits

from pipekit_train import Callback, Checkpoint, TrainingLoop


class Saves(Callback):
    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_checkpoint(self, loop, state, step) -> None:
        self.steps.append(step)


def main() -> None:
    run_job(sys.argv[1], int(sys.argv[2]))


def run_job(out: str, devices: int) -> None:
    """Train and write this rank's arrays and metrics into ``out``."""
    torch.set_num_threads(1)
    digits = load_digits()
    data = {"x": (digits.data / 16).astype(np.float32), "y": digits.target.astype(np.int64)}
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 10))
    options = {"accelerator": "cpu", "devices": devices}
    if devices > 1:
        options["strategy"] = "ddp"
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    saves = Saves()
    seconds = 1e-6 if rank == 0 else 1e9  # only rank 0's clock may decide
    loop = TrainingLoop(
        backend="lightning",
        model_op=model,
        dataset=data,
        loss="cross_entropy",
        batch_size=32,
        max_steps=20,
        log_every_n_steps=5,
        optimizer_config={"name": "adamw", "lr": 1e-2},
        backend_options=options,
        checkpoint_dir=os.path.join(out, "ckpt"),
        callbacks=[Checkpoint(every_n_seconds=seconds, keep_last=None), saves],
    )
    op, info = loop.run()
    arrays = {k: v.numpy() for k, v in op.module.state_dict().items()}
    np.savez(os.path.join(out, f"rank{rank}.npz"), **arrays)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(
            {
                "final_step": info["final_step"],
                "loss": info["final_metrics"]["loss"],
                "saves": saves.steps,
            },
            f,
        )


if __name__ == "__main__":
    main()
