"""A numpyro-svi job run in a subprocess by the SVI SIGKILL resume test.

Usage: python _svi_resume_worker.py CKPT_DIR OUT_NPZ PAUSE_AT [DATA]

A Bayesian linear regression (posteriordb's ``sblrc`` model, 80 rows, minibatches of 16,
shuffled), AutoNormal guide, Adam, 60 steps fused 7 at a time, a checkpoint every 20
steps, a host event every 5. With PAUSE_AT > 0 the process prints ``PAUSED <step>`` at
that step's host event and sleeps, so that the parent's SIGKILL lands at a known step
however loaded the machine is. Otherwise it writes the guide's params and every step's
loss (``loss_steps``, ``loss``) to OUT_NPZ and prints backend_info's summary as JSON.

DATA: ``map`` (default: the arrays, pipekit's shuffled batch source) or ``iter``: the same
rows as the user's own ``grain.IterDataset`` of single examples (shuffled and repeated by
Grain), sized by ``backend_options.num_data`` (issue 20).
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
from _npy_helpers import pdb

from pipekit_train import Callback, Checkpoint, TrainingLoop
from pipekit_train.adapters.bayes import NumpyroTask

MAX_STEPS, STEPS_PER_CALL, EVERY, LOG = 60, 7, 20, 5


class Recorder(Callback):
    """Keeps every step's loss (from ``state.window``) and pauses at ``pause_at``."""

    def __init__(self, pause_at: int) -> None:
        self.pause_at = pause_at
        self.losses: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window.get("loss", []), strict=True):
            self.losses[int(step)] = float(loss)
        if state.step == self.pause_at:
            print(f"PAUSED {state.step}", flush=True)
            time.sleep(600)  # the parent SIGKILLs us here


def main() -> None:
    ckpt_dir, out, pause_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "map"
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(80, 5)).astype(np.float32)
    y = (x @ np.arange(1.0, 6.0) + 0.5 * rng.normal(size=80)).astype(np.float32)
    recorder = Recorder(pause_at)
    options: dict = {"steps_per_call": STEPS_PER_CALL}
    dataset: object = (x, y)
    if kind == "iter":
        import grain

        examples = [{"x": x[i], "y": y[i]} for i in range(80)]
        dataset = grain.MapDataset.source(examples).shuffle(seed=11).repeat().to_iter_dataset()
        options["num_data"] = 80
    loop = TrainingLoop(
        task=NumpyroTask(model=pdb.sblrc, guide="AutoNormal", predictive_samples=10),
        dataset=dataset,
        backend="numpyro-svi",
        batch_size=16,
        max_steps=MAX_STEPS,
        seed=3,
        optimizer_config={"name": "adam", "lr": 0.01},
        log_every_n_steps=LOG,
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=EVERY), recorder],
        backend_options=options,
    )
    _, info = loop.run()
    steps = sorted(recorder.losses)
    np.savez(
        out,
        loss_steps=np.asarray(steps, dtype=np.int64),
        loss=np.asarray([recorder.losses[s] for s in steps], dtype=np.float64),
        **{f"param:{k}": v for k, v in info["params"].items()},
    )
    keys = ("final_step", "resumed_from_step", "interrupted", "final_loss")
    print(json.dumps({k: info[k] for k in keys}))


if __name__ == "__main__":
    main()
