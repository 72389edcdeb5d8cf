"""A population trained in a subprocess by the population resume test.

Usage: python _population_worker.py CKPT_DIR OUT_NPZ KILL_AT

Three members of a small dropout MLP (two own seeds, so per-member batches and keys,
and different learning rates / weight decays) for 30 steps, fused 4 steps per call,
a checkpoint every 10. With KILL_AT > 0 the process SIGKILLs itself right after the
checkpoint of that step was handed to the asynchronous writer. Otherwise it writes the
final checkpoint's arrays (the stacked carry), every member's weights and every logged
per-member loss to OUT_NPZ, and prints the members' resume facts as JSON.
"""

from __future__ import annotations

import json
import os
import signal
import sys

import equinox as eqx
import jax
import numpy as np

from pipekit_train import Callback, Checkpoint, TrainingLoop
from pipekit_train.adapters.equinox import run_population
from pipekit_train.jax.checkpoint import read_state

MAX_STEPS = 30
MEMBERS = [
    {"seed": 1, "optimizer_config.lr": 3e-3},
    {"seed": 2, "optimizer_config.lr": 3e-2, "optimizer_config.weight_decay": 0.05},
    {"seed": 1, "optimizer_config.lr": 1e-2, "optimizer_config.b1": 0.8},
]


class DropoutMLP(eqx.Module):
    hidden: eqx.nn.Linear
    out: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __init__(self) -> None:
        k1, k2 = jax.random.split(jax.random.PRNGKey(0))
        self.hidden = eqx.nn.Linear(8, 16, key=k1)
        self.out = eqx.nn.Linear(16, 3, key=k2)
        self.dropout = eqx.nn.Dropout(0.3)

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        return self.out(self.dropout(jax.nn.relu(self.hidden(x)), key=key, inference=key is None))


class Recorder(Callback):
    def __init__(self, kill_at: int) -> None:
        self.kill_at = kill_at
        self.losses: dict[str, float] = {}

    def on_step_end(self, loop, state) -> None:
        for name, values in state.window.items():
            if name.startswith("loss/"):
                for step, value in zip(state.window_steps, values, strict=True):
                    self.losses[f"{name}@{step}"] = float(value)

    def on_checkpoint(self, loop, state, step) -> None:
        if step == self.kill_at:
            os.kill(os.getpid(), signal.SIGKILL)


def main() -> None:
    ckpt_dir, out, kill_at = sys.argv[1:4]
    rng = np.random.default_rng(0)
    x = rng.normal(size=(120, 8)).astype(np.float32)
    data = {"x": x, "y": ((x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0)).astype(np.int32)}
    recorder = Recorder(int(kill_at))
    loop = TrainingLoop(
        model_op=DropoutMLP(),
        dataset=data,
        loss="cross_entropy",
        batch_size=16,
        max_steps=MAX_STEPS,
        optimizer_config={"name": "adamw", "lr": 1e-2},
        log_every_n_steps=5,
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=10, keep_last=2), recorder],
        backend="equinox",
        backend_options={
            "steps_per_call": 4,
            "compilation_cache": os.environ.get("PIPEKIT_TEST_JAX_CACHE"),
        },
    )
    population = run_population(loop, MEMBERS)
    infos = [info for _, info in population]
    summary = {key: infos[0][key] for key in ("resumed_from_step", "final_step")}
    summary["batches"] = infos[0]["population"]["batches"]
    final = read_state(os.path.join(ckpt_dir, str(MAX_STEPS)))
    arrays = {f"carry_{key}": np.asarray(value) for key, value in final.items()}
    for m, (op, _) in enumerate(population):
        for i, a in enumerate(jax.tree_util.tree_leaves(eqx.filter(op.module, eqx.is_array))):
            arrays[f"param_{m}_{i}"] = np.asarray(a)
    names = sorted(recorder.losses)
    np.savez(
        out,
        **arrays,
        loss_names=np.array(names),
        losses=np.array([recorder.losses[n] for n in names]),
    )
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
