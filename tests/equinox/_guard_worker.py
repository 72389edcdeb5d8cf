"""Subprocess worker for the resume-guard test: one run of a model with a static callable field.

``python _guard_worker.py CKPT_DIR MAX_STEPS {yaml|python} {constant|cosine} RESUME`` trains
``Net`` (an ``eqx.Module`` whose ``act`` is ``eqx.field(static=True)`` set to
``jax.nn.gelu``) and prints ``RESULT <resumed_from_step> <final_step>``, or
``CHECKPOINT_ERROR`` and the message (exit code 3).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable

import equinox as eqx
import jax
import numpy as np
from _eqx_helpers import make_data, make_module

from pipekit_train import TrainingLoop
from pipekit_train.errors import CheckpointError


class Net(eqx.Module):
    mlp: eqx.nn.MLP
    act: Callable = eqx.field(static=True)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.act(self.mlp(x))


def make_net() -> Net:
    return Net(make_module(), jax.nn.gelu)


def make_train() -> dict[str, np.ndarray]:
    return make_data(64)


YAML = """
model_op: _guard_worker:make_net
dataset: _guard_worker:make_train
loss: cross_entropy
batch_size: 16
max_steps: {max_steps}
log_every_n_steps: 5
checkpoint_dir: {ckpt}
optimizer_config:
  name: adam
  lr: {lr}
backend_options:
  resume: {resume}
"""


def main(ckpt: str, max_steps: int, form: str, schedule: str, resume: str) -> int:
    lr: object = 1e-3
    if schedule == "cosine":
        lr = {"schedule": "cosine_decay", "init_value": 1e-3}
    if form == "yaml":
        assert schedule == "constant"
        # YAML 1.1 reads 1e-3 (no dot) as the string "1e-3".
        loop = TrainingLoop.from_yaml(
            YAML.format(max_steps=max_steps, ckpt=ckpt, lr="1e-3", resume=resume)
        )
        assert loop.optimizer_config["lr"] == "1e-3"
    else:
        loop = TrainingLoop(
            model_op=make_net(),
            dataset=make_train(),
            loss="cross_entropy",
            batch_size=16,
            max_steps=max_steps,
            log_every_n_steps=5,
            checkpoint_dir=ckpt,
            optimizer_config={"name": "adam", "lr": lr},
            backend_options={"resume": resume},
        )
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, info = loop.run()
    except CheckpointError as exc:
        print("CHECKPOINT_ERROR", exc, flush=True)
        return 3
    forced = any("Resuming anyway" in str(w.message) for w in caught)
    print("RESULT", info["resumed_from_step"], info["final_step"], "forced" if forced else "")
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    sys.exit(main(a[0], int(a[1]), a[2], a[3], a[4]))
