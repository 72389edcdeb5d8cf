"""A training job run in a subprocess by the resume tests.

Usage: python _resume_worker.py CKPT_DIR OUT_NPZ STEPS_PER_CALL KILL_AT KILL_HOOK

Trains a small dropout MLP on digits (so parameters depend on the RNG stream
and the data order) for 60 steps with a checkpoint every 10. If KILL_AT > 0
the process SIGKILLs itself at that step, from the hook named by KILL_HOOK
("step": at the host event of that step; "checkpoint": right after the
checkpoint of that step was handed to the asynchronous writer; "sigterm": sends
SIGTERM instead, which must checkpoint and exit cleanly). Otherwise it writes
every array of the final carry, and the loss of every step it ran, to OUT_NPZ.
With ``PIPEKIT_TEST_CKPT_SECONDS`` set, the checkpoint cadence is that time cadence
(``Checkpoint(every_n_seconds=…)``) instead of every 10 steps.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
from sklearn.datasets import load_digits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from resume_killer import Killer  # noqa: E402

from pipekit_train import Checkpoint, TrainingLoop  # noqa: E402
from pipekit_train.jax.checkpoint import read_state  # noqa: E402

MAX_STEPS = 60


class DropoutMLP(eqx.Module):
    layers: list
    dropout: eqx.nn.Dropout

    def __init__(self, key: jax.Array) -> None:
        k1, k2 = jax.random.split(key)
        self.layers = [eqx.nn.Linear(64, 32, key=k1), eqx.nn.Linear(32, 10, key=k2)]
        self.dropout = eqx.nn.Dropout(0.3)

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        h = jax.nn.relu(self.layers[0](x))
        h = self.dropout(h, key=key, inference=key is None)
        return self.layers[1](h)


class Recorder(Killer):
    """Records every step's loss; kills the process at the requested point (``Killer``)."""

    def __init__(self, kill_at: int, hook: str) -> None:
        super().__init__(kill_at, hook)
        self.losses: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window["loss"], strict=True):
            self.losses[step] = float(loss)
        super().on_step_end(loop, state)


def _checkpoint() -> Checkpoint:
    seconds = os.environ.get("PIPEKIT_TEST_CKPT_SECONDS")
    if seconds:
        return Checkpoint(every_n_seconds=float(seconds), keep_last=2)
    return Checkpoint(every_n_steps=10, keep_last=2)


def main() -> None:
    ckpt_dir, out, k, kill_at, hook = sys.argv[1:6]
    digits = load_digits()
    data = {"x": (digits.data / 16).astype(np.float32), "y": digits.target.astype(np.int32)}
    recorder = Recorder(int(kill_at), hook)
    loop = TrainingLoop(
        model_op=DropoutMLP(jax.random.PRNGKey(0)),
        dataset=data,
        loss="cross_entropy",
        batch_size=64,
        max_steps=MAX_STEPS,
        optimizer_config={"name": "adamw", "lr": 1e-2},
        log_every_n_steps=3,
        checkpoint_dir=ckpt_dir,
        callbacks=[_checkpoint(), recorder],
        seed=7,
        backend_options={
            "steps_per_call": int(k),
            "compilation_cache": os.environ.get("PIPEKIT_TEST_JAX_CACHE"),
        },
    )
    op, info = loop.run()
    summary = {key: info[key] for key in ("resumed_from_step", "final_step", "interrupted")}
    if info["interrupted"]:
        print(json.dumps(summary))
        return
    # The final checkpoint holds the whole carry: parameters, optimiser state, step.
    final = read_state(os.path.join(ckpt_dir, str(MAX_STEPS)))
    arrays = {f"carry_{key}": np.asarray(value) for key, value in final.items()}
    arrays.update(
        {
            f"param_{i}": np.asarray(a)
            for i, a in enumerate(jax.tree_util.tree_leaves(eqx.filter(op.module, eqx.is_array)))
        }
    )
    steps = sorted(recorder.losses)
    np.savez(
        out,
        **arrays,
        loss_steps=np.array(steps),
        losses=np.array([recorder.losses[s] for s in steps]),
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
