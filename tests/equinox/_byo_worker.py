"""A training job with the user's own objects, run in a subprocess by the bring-your-own tests.

Usage: python _byo_worker.py CKPT_DIR OUT_NPZ KILL_AT OPTIMIZER DATA

OPTIMIZER: ``optax`` (the user's own ``optax.chain`` with an inject_hyperparams
adamw on a cosine schedule) or ``optax-other`` (a different object: adam at another
rate). DATA: ``map`` (a dict of arrays), ``iter`` (a ``grain.IterDataset`` of
single examples, shuffled and repeated by Grain) or ``mapds`` (a ``grain.MapDataset``
the user shuffled, read in its own order). A dropout MLP on a small
synthetic problem trains 40 steps with a checkpoint every 10; with KILL_AT > 0 the
process SIGKILLs itself at that step (``tests/resume_killer.py``). Otherwise it
writes the final carry and every step's loss to OUT_NPZ and prints a JSON
summary; a ``PipekitError`` is printed as ``ERROR <class>: <message>`` (exit 3).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import equinox as eqx
import jax
import numpy as np
import optax

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _eqx_helpers import make_data  # noqa: E402
from resume_killer import Killer  # noqa: E402

from pipekit_train import Callback, Checkpoint, PipekitError, TrainingLoop  # noqa: E402
from pipekit_train.jax.checkpoint import read_state  # noqa: E402

MAX_STEPS = 40


class DropoutMLP(eqx.Module):
    layers: list
    dropout: eqx.nn.Dropout

    def __init__(self, key: jax.Array) -> None:
        k1, k2 = jax.random.split(key)
        self.layers = [eqx.nn.Linear(4, 16, key=k1), eqx.nn.Linear(16, 3, key=k2)]
        self.dropout = eqx.nn.Dropout(0.3)

    def __call__(self, x: jax.Array, *, key: jax.Array | None = None) -> jax.Array:
        h = jax.nn.relu(self.layers[0](x))
        h = self.dropout(h, key=key, inference=key is None)
        return self.layers[1](h)


class Losses(Callback):
    def __init__(self) -> None:
        self.losses: dict[int, float] = {}

    def on_step_end(self, loop, state) -> None:
        for step, loss in zip(state.window_steps, state.window["loss"], strict=True):
            self.losses[step] = float(loss)


def optimizer(kind: str):
    if kind == "optax":
        return optax.chain(
            optax.clip_by_global_norm(1.0),
            optax.inject_hyperparams(optax.adamw)(
                learning_rate=optax.cosine_decay_schedule(1e-2, 100), weight_decay=1e-3
            ),
        )
    return optax.adam(3e-3)


def dataset(kind: str):
    data = make_data(96)
    if kind == "map":
        return data
    import grain

    records = [{"x": data["x"][i], "y": data["y"][i]} for i in range(len(data["x"]))]
    if kind == "mapds":
        return grain.MapDataset.source(records).shuffle(seed=5)
    return grain.MapDataset.source(records).shuffle(seed=5).repeat().to_iter_dataset()


def main() -> None:
    ckpt_dir, out, kill_at, opt_kind, data_kind = sys.argv[1:6]
    losses = Losses()
    loop = TrainingLoop(
        model_op=DropoutMLP(jax.random.PRNGKey(0)),
        dataset=dataset(data_kind),
        loss="cross_entropy",
        batch_size=16,
        max_steps=MAX_STEPS,
        optimizer_config=optimizer(opt_kind),
        log_every_n_steps=3,
        checkpoint_dir=ckpt_dir,
        callbacks=[Checkpoint(every_n_steps=10, keep_last=2), losses, Killer(int(kill_at), "step")],
        seed=7,
        backend_options={
            "steps_per_call": 3,
            "compilation_cache": os.environ.get("PIPEKIT_TEST_JAX_CACHE"),
        },
    )
    try:
        op, info = loop.run()
    except PipekitError as exc:
        print(f"ERROR {type(exc).__name__}: {exc}")
        sys.exit(3)
    final = read_state(os.path.join(ckpt_dir, str(MAX_STEPS)))
    arrays = {f"carry_{key}": np.asarray(value) for key, value in final.items()}
    steps = sorted(losses.losses)
    np.savez(
        out,
        **arrays,
        loss_steps=np.array(steps),
        losses=np.array([losses.losses[s] for s in steps]),
    )
    summary = {key: info[key] for key in ("resumed_from_step", "final_step")}
    summary["optimizer"] = info.get("optimizer")
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
