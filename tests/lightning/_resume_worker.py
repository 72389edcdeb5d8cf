"""A Lightning training job run in a subprocess by the resume tests.

Usage: python _resume_worker.py CKPT_DIR OUT_NPZ NUM_WORKERS KILL_AT SIGNAL

Trains a small dropout MLP on digits (so the parameters depend on the RNG stream
and the data order) for 40 steps (an epoch is 28 steps, so the run crosses an
epoch boundary) with a checkpoint every 10. If KILL_AT > 0 the process sends
itself SIGNAL ("SIGKILL" or "SIGTERM") at the host event of that step. At the
end it writes the module's state_dict, the optimiser state and the loss of every
step it ran to OUT_NPZ, plus backend_info as OUT_NPZ + ".json".
``PIPEKIT_TEST_FEATURES=1`` trains with ``accumulate_steps=2`` and ``ema_decay=0.9`` (the
op then holds the average, and the last checkpoint's ``ema`` goes to OUT_NPZ too).
``PIPEKIT_TEST_OWN=1`` trains the user's own ``LightningModule`` (``_own_module.OwnModule``:
its training_step, SGD + momentum and a per-step StepLR; no loss=, default optimizer_config)
and records the logged ``lr`` of every step too. ``PIPEKIT_TEST_LOADER=1`` (with it) gives the
data as a shuffled ``torch.utils.data.DataLoader`` over a ``TensorDataset``, whose ``(x, y)``
batches the module's training_step takes.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import numpy as np
import torch
from sklearn.datasets import load_digits

from pipekit_train import Callback, Checkpoint, TrainingLoop

MAX_STEPS = 40


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return torch.nn.Sequential(
        torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(32, 10)
    )


class Recorder(Callback):
    """Records every step's loss; signals the process at ``kill_at``."""

    def __init__(self, kill_at: int, sig: str) -> None:
        self.kill_at, self.sig = kill_at, sig
        self.losses: dict[int, float] = {}
        self.rates: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window["loss"], strict=True):
            self.losses[step] = float(loss)
        for step, rate in zip(state.window_steps, state.window["lr"], strict=True):
            self.rates[step] = float(rate)
        if state.step == self.kill_at:
            os.kill(os.getpid(), getattr(signal, self.sig))


def main() -> None:
    ckpt_dir, out, workers, kill_at, sig = sys.argv[1:6]
    torch.set_num_threads(1)
    digits = load_digits()
    data = {"x": (digits.data / 16).astype(np.float32), "y": digits.target.astype(np.int64)}
    recorder = Recorder(int(kill_at), sig)
    features = (
        {"accumulate_steps": 2, "ema_decay": 0.9} if os.environ.get("PIPEKIT_TEST_FEATURES") else {}
    )
    if os.environ.get("PIPEKIT_TEST_OWN"):
        sys.path.insert(0, os.path.dirname(__file__))
        from _own_module import OwnModule

        model: dict = {"model_op": OwnModule(features=64, classes=10, step_size=15)}
        if os.environ.get("PIPEKIT_TEST_LOADER"):
            from _own_module import TupleBatches

            model = {"model_op": TupleBatches(features=64, classes=10, step_size=15)}
            tensors = torch.utils.data.TensorDataset(
                torch.from_numpy(data["x"]), torch.from_numpy(data["y"])
            )
            data = torch.utils.data.DataLoader(tensors, batch_size=64, shuffle=True)
    else:
        model = {
            "model_op": make_model(),
            "loss": "cross_entropy",
            "optimizer_config": {
                "name": "adamw",
                "lr": {"schedule": "cosine_decay", "init_value": 1e-2},
            },
        }
    loop = TrainingLoop(
        **features,
        **model,
        backend="lightning",
        dataset=data,
        batch_size=64,
        max_steps=MAX_STEPS,
        log_every_n_steps=3,
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=10, keep_last=2), recorder],
        seed=3,
        backend_options={"num_workers": int(workers), "accelerator": "cpu"},
    )
    op, info = loop.run()
    arrays = {f"module/{k}": v.numpy() for k, v in op.module.state_dict().items()}
    step = info["last_checkpoint_step"]
    ckpt = torch.load(os.path.join(ckpt_dir, f"step-{step:09d}.pt"), weights_only=True)
    for pid, st in ckpt["optimizer"]["state"].items():
        for name, value in st.items():
            arrays[f"opt/{pid}/{name}"] = np.asarray(value)
    for name, value in (ckpt.get("ema") or {}).items():
        arrays[f"ema/{name}"] = value.numpy()
    arrays["losses_steps"] = np.array(sorted(recorder.losses))
    arrays["losses"] = np.array([recorder.losses[s] for s in sorted(recorder.losses)])
    arrays["rates"] = np.array([recorder.rates[s] for s in sorted(recorder.losses)])
    np.savez(out, **arrays)
    keys = ("final_step", "resumed_from_step", "interrupted", "stop_reason", "last_checkpoint_step")
    with open(out + ".json", "w") as f:
        json.dump({k: info[k] for k in keys}, f)


if __name__ == "__main__":
    main()
