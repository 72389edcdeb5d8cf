"""A population sweep with a pruner, shared by the population sweep tests; also their worker.

Built from ``examples/digits_sweep.yaml`` (a small MLP on scikit-learn's digits, Optuna's
``val_loss`` objective) shrunk to 20 steps, with the learning rate a categorical choice
that holds one clearly diverging value (``BAD_LR``, Adam at 30) and Optuna's
``ThresholdPruner`` on ``val_loss`` from step 10: the pruner must prune every trial that
drew ``BAD_LR`` and none that drew a sane rate.

Usage as a worker: ``python _population_sweep.py FOLDER KILL_AFTER_TELLS`` runs the
sweep in ``FOLDER``; with ``KILL_AFTER_TELLS > 0`` the process SIGKILLs itself right
after its ``KILL_AFTER_TELLS``-th ``study.tell`` (the first is the bad member's
``PRUNED`` while the population trains on); ``PIPEKIT_TEST_STARTS`` names a file each
run start appends ``<checkpoint_dir> <step>`` to.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import numpy as np
from _sweep_helpers import trials_of
from sklearn.datasets import load_digits

from pipekit_train import Callback

__all__ = ["BAD_LR", "make_sweep", "trials_of"]

BAD_LR = 30.0
SPACE = {"optimizer_config.lr": {"type": "categorical", "choices": [3e-3, 1e-2, BAD_LR]}}
PRUNER = {"name": "ThresholdPruner", "kwargs": {"upper": 3.0, "n_warmup_steps": 10}}


def load_split(split: str = "train") -> dict[str, np.ndarray]:
    """The first 300 digits (train) or the next 150 (test): float32 x [., 64], int32 y."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int32)
    part = slice(0, 300) if split == "train" else slice(300, 450)
    return {"x": x[part], "y": y[part]}


def make_model(hidden: int = 16) -> Any:
    import equinox as eqx
    import jax

    from pipekit_train.adapters.equinox import JaxModelOp

    module = eqx.nn.MLP(64, 10, hidden, 1, key=jax.random.PRNGKey(0))
    return JaxModelOp(
        module, factory="_population_sweep:make_model", factory_kwargs={"hidden": hidden}
    )


class RecordStart(Callback):
    """Append ``<checkpoint_dir> <step>`` to ``$PIPEKIT_TEST_STARTS`` at each run start."""

    def on_run_start(self, loop: Any, state: Any) -> None:
        path = os.environ.get("PIPEKIT_TEST_STARTS")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(f"{loop.checkpoint_dir} {state.step}\n")


def loop_config() -> dict[str, Any]:
    return {
        "backend": "equinox",
        "model_op": {"factory": "_population_sweep:make_model", "kwargs": {"hidden": 16}},
        "dataset": {"factory": "_population_sweep:load_split", "kwargs": {"split": "train"}},
        "val_dataset": {"factory": "_population_sweep:load_split", "kwargs": {"split": "test"}},
        "loss": "cross_entropy",
        "batch_size": 32,
        "max_steps": 20,
        "optimizer_config": {"name": "adam", "lr": 1e-3},
        "log_every_n_steps": 5,
        "eval_every_n_steps": 5,
        "callbacks": [
            {"Checkpoint": {"every_n_steps": 5, "keep_last": 2}},
            "_population_sweep:RecordStart",
        ],
    }


def make_sweep(
    folder: Path, population: int | None, cache: str | None = None, pruner: Any = PRUNER
) -> Any:
    from pipekit_train.sweep import Sweep

    return Sweep(
        loop=loop_config(),
        space=SPACE,
        objective="val_loss",
        direction="minimize",
        n_trials=4,
        seed=5,  # trials 0..3 draw lr 1e-2, BAD_LR, 3e-3, 3e-3
        sampler="RandomSampler",
        pruner=pruner,
        folder=folder,
        population=population,
        population_rule=False,
        search_path=(str(Path(__file__).resolve().parent),),
        compilation_cache=cache,
    )


def _kill_after(n: int) -> None:
    import optuna

    tell, told = optuna.study.Study.tell, [0]

    def killing_tell(self: Any, *args: Any, **kwargs: Any) -> Any:
        out = tell(self, *args, **kwargs)
        told[0] += 1
        if told[0] == n:
            os.kill(os.getpid(), signal.SIGKILL)
        return out

    optuna.study.Study.tell = killing_tell  # type: ignore[method-assign]


def main() -> None:
    folder, kill_after, cache = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    if kill_after > 0:
        _kill_after(kill_after)
    make_sweep(Path(folder), population=4, cache=cache).run()


if __name__ == "__main__":
    main()
