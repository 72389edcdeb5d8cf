"""The Equinox backend gives the same bits through core's program builder as it did before.

The digests below were recorded on main before the fusion, donation, key folding
and sharding pins moved from the Equinox adapter into
``pipekit_train.jax.program`` (commit ead37a0), with this file's exact runs:
final parameters and every step's loss, for a plain MLP and one with dropout
(so the per-step keys are covered), with a constant rate and a cosine schedule,
fused (K=50) with checkpoints and unfused. Same platform, same locked library
versions: any change in the compiled step shows up here.
"""

from __future__ import annotations

import hashlib

import equinox as eqx
import jax
import numpy as np
import pytest
from _eqx_helpers import make_data, make_module

from pipekit_train import Callback, Checkpoint, TrainingLoop

RECORDED = {
    ("mlp", False): "cb732466da7b1263",
    ("mlp", True): "c908453b6de1fb70",
    ("dropout", False): "275c2116645b6625",
    ("dropout", True): "7fa9467b29f0c5ce",
}


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state):
        self.loss.extend(state.window["loss"])


class DropMLP(eqx.Module):
    mlp: eqx.nn.MLP
    drop: eqx.nn.Dropout

    def __call__(self, x, *, key):
        return self.mlp(self.drop(x, key=key))


def _digest(model, schedule: bool, k: int, ckpt_dir) -> str:
    rec = Losses()
    lr = {"schedule": "cosine_decay", "init_value": 1e-2} if schedule else 1e-2
    loop = TrainingLoop(
        model_op=model,
        dataset=make_data(96),
        val_dataset=make_data(16, seed=1),
        loss="cross_entropy",
        batch_size=16,
        max_steps=37,
        log_every_n_steps=10,
        eval_every_n_steps=9,
        optimizer_config={"name": "adamw" if schedule else "adam", "lr": lr},
        callbacks=[rec] + ([Checkpoint(every_n_steps=12)] if ckpt_dir else []),
        checkpoint_dir=ckpt_dir,
        backend_options={"steps_per_call": k},
    )
    op, _ = loop.run()
    h = hashlib.sha256()
    for leaf in jax.tree_util.tree_leaves(eqx.filter(op.module, eqx.is_array)):
        h.update(np.asarray(leaf).tobytes())
    h.update(np.asarray(rec.loss, np.float32).tobytes())
    return h.hexdigest()[:16]


@pytest.mark.parametrize("schedule", [False, True], ids=["constant", "cosine"])
@pytest.mark.parametrize("name", ["mlp", "dropout"])
def test_same_bits_as_before(tmp_path, name, schedule):
    model = make_module() if name == "mlp" else DropMLP(make_module(), eqx.nn.Dropout(0.2))
    assert _digest(model, schedule, 1, None) == RECORDED[(name, schedule)]
    assert _digest(model, schedule, 50, str(tmp_path / "ck")) == RECORDED[(name, schedule)]
