"""Issue 20: which compile is "the user's" in a second run. A model the user compiled keeps
its SGD instance run after run (its iterations go on counting); a model the loop compiled
(or a ``KerasModelOp`` loaded from an archive the loop wrote) is compiled again from the
next loop's own ``loss=`` and ``optimizer_config`` — no contradiction error."""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop
from pipekit_train.adapters.keras import KerasModelOp


def _run(model, **fields):
    return TrainingLoop(
        model_op=model, dataset=digits(128), batch_size=32, max_steps=2, backend="keras", **fields
    ).run()


def test_users_compile_is_kept_in_every_run() -> None:
    model = mlp()
    sgd = keras.optimizers.SGD(0.1)
    model.compile(optimizer=sgd, loss=keras.losses.SparseCategoricalCrossentropy(True))
    _run(model)
    _run(model)
    assert model.optimizer is sgd and int(np.asarray(sgd.iterations.value)) == 4


def test_loops_compile_and_a_loaded_op_take_the_next_loops_fields(tmp_path: Path) -> None:
    model = mlp()
    _run(model, loss="cross_entropy")
    _run(model, loss="cross_entropy", optimizer_config={"name": "sgd", "lr": 0.1})
    assert isinstance(model.optimizer, keras.optimizers.SGD)
    KerasModelOp(model).save(tmp_path / "op")
    loaded = KerasModelOp.load(tmp_path / "op")
    _run(loaded, loss="cross_entropy", optimizer_config={"name": "adam", "lr": 1e-3})
    assert isinstance(loaded.model.optimizer, keras.optimizers.Adam)
