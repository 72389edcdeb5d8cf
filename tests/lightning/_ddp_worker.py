"""A job for the DDP test: ``python _ddp_worker.py OUT_DIR DEVICES``.

With DEVICES=2 Lightning's DDP launcher re-runs this script as a second process
(CPU, gloo); each rank writes its final state_dict and final metrics to
``OUT_DIR/rank<r>.npz``. With DEVICES=1 it is the one-process reference on the
same global batches.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits

from pipekit_train import TrainingLoop


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
    )
    op, info = loop.run()
    rank = int(os.environ.get("LOCAL_RANK", "0"))
    arrays = {k: v.numpy() for k, v in op.module.state_dict().items()}
    np.savez(os.path.join(out, f"rank{rank}.npz"), **arrays)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump({"final_step": info["final_step"], "loss": info["final_metrics"]["loss"]}, f)


if __name__ == "__main__":
    main()
