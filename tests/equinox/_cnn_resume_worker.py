"""A batch-norm CNN training job run in a subprocess by the stateful SIGKILL resume test.

Usage: python _cnn_resume_worker.py CKPT_DIR OUT_NPZ STEPS_PER_CALL KILL_AT

Trains ``examples/digits_cnn.py``'s CNN (8 channels) for 40 steps with a
checkpoint every 10 and an EMA of the weights. With KILL_AT > 0 the process
SIGKILLs itself at the host event of that step. Otherwise it writes every array
of the final checkpoint's carry (parameters, optimiser state, step, batch-norm
state, EMA), the trained op's weights and state, its predictions on the test
split, and the loss of every step it ran, to OUT_NPZ.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import jax
import numpy as np
from _cnn_example import digits_cnn

from pipekit_train import Callback, Checkpoint
from pipekit_train.jax.checkpoint import read_state

MAX_STEPS = 40


class Recorder(Callback):
    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at
        self.losses: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window["loss"], strict=True):
            self.losses[step] = float(loss)
        if state.step == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    ckpt_dir, out, k, kill_at = sys.argv[1:5]
    recorder = Recorder(int(kill_at))
    loop = digits_cnn.make_loop(
        model_op=digits_cnn.make_model(channels=8),
        max_steps=MAX_STEPS,
        eval_every_n_steps=None,
        val_dataset=None,
        log_every_n_steps=3,
        ema_decay=0.9,
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=10, keep_last=2), recorder],
        seed=3,
        backend_options={
            "steps_per_call": int(k),
            "compilation_cache": os.environ.get("PIPEKIT_TEST_JAX_CACHE"),
        },
    )
    op, info = loop.run()
    final = read_state(os.path.join(ckpt_dir, str(MAX_STEPS)))
    arrays = {f"carry_{key}": np.asarray(value) for key, value in final.items()}
    arrays.update(
        {f"op_{i}": np.asarray(a) for i, a in enumerate(jax.tree_util.tree_leaves(op.module))}
    )
    arrays.update(
        {f"opstate_{i}": np.asarray(a) for i, a in enumerate(jax.tree_util.tree_leaves(op.state))}
    )
    steps = sorted(recorder.losses)
    np.savez(
        out,
        **arrays,
        prediction=np.asarray(op(digits_cnn.load_split("test")["x"])),
        loss_steps=np.array(steps),
        losses=np.array([recorder.losses[s] for s in steps]),
    )
    print(json.dumps({key: info[key] for key in ("resumed_from_step", "final_step")}))


if __name__ == "__main__":
    main()
