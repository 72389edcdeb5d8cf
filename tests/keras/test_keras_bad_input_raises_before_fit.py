"""Every user mistake is a PipekitError naming the field, raised before `fit` starts.

"Before fit" is checked by ``optimizer.iterations`` staying 0 (no step ran) and, for
the checkpoint guard, by the directory being left untouched.
"""

from __future__ import annotations

from pathlib import Path

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import Checkpoint, TrainingLoop
from pipekit_train.errors import CheckpointError, ConfigError, DataError


def _loop(**overrides):
    fields = dict(
        model_op=mlp(),
        dataset=digits(256),
        loss="cross_entropy",
        batch_size=32,
        max_steps=10,
        backend="keras",
    )
    fields.update(overrides)
    return TrainingLoop(**fields)


def _no_step_ran(model) -> None:
    optimizer = getattr(model, "optimizer", None)
    assert optimizer is None or int(np.asarray(optimizer.iterations.value)) == 0


def test_model_that_is_not_a_keras_model() -> None:
    with pytest.raises(ConfigError, match="keras.Model or a KerasModelOp") as e:
        _loop(model_op=object()).run()
    assert e.value.field == "model_op"


def test_optimizer_keras_cannot_map_lists_what_it_supports() -> None:
    model = mlp()
    supports = "the keras backend has no optimiser 'yogi'; it supports: adadelta, adafactor"
    with pytest.raises(ConfigError, match=supports) as e:
        _loop(model_op=model, optimizer_config={"name": "yogi", "lr": 1e-3}).run()
    assert e.value.field == "optimizer_config.name"
    _no_step_ran(model)


def test_unknown_optimizer_name_is_rejected_at_construction() -> None:
    with pytest.raises(ConfigError, match="unknown optimiser 'adamz'"):
        _loop(optimizer_config={"name": "adamz", "lr": 1e-3})


def test_optimizer_keyword_keras_does_not_take() -> None:
    with pytest.raises(ConfigError, match="takes no 'nesterov'") as e:
        _loop(optimizer_config={"name": "adam", "lr": 1e-3, "nesterov": True}).run()
    assert e.value.field == "optimizer_config.nesterov"


def test_schedule_option_keras_lacks() -> None:
    lr = {"schedule": "cosine_decay", "init_value": 1e-3, "exponent": 2.0}
    with pytest.raises(ConfigError, match="no equivalent in keras.optimizers.schedules") as e:
        _loop(optimizer_config={"name": "adam", "lr": lr}).run()
    assert e.value.field == "optimizer_config.lr.exponent"


def test_unknown_loss_name() -> None:
    with pytest.raises(ConfigError, match="did you mean 'cross_entropy'") as e:
        _loop(loss="sparse_categorical_crossentropy")
    assert e.value.field == "loss"


def test_data_that_does_not_fit_the_model_is_data_error() -> None:
    model = mlp(inputs=32)
    with pytest.raises(DataError, match="TrainingLoop.dataset does not fit the model"):
        _loop(model_op=model).run()
    _no_step_ran(model)


def test_val_data_that_does_not_fit_the_model_is_data_error() -> None:
    bad = {"x": digits(64)["x"][:, :32], "y": digits(64)["y"]}
    with pytest.raises(DataError, match="TrainingLoop.val_dataset does not fit the model"):
        _loop(val_dataset=bad).run()


def test_targets_the_loss_cannot_use_is_config_error() -> None:
    data = digits(256)
    data["y"] = data["y"].reshape(-1, 1).repeat(3, axis=1).astype("float32")
    match = r"TrainingLoop.loss: loss 'mse' got predictions of shape \(32, 10\) and targets of"
    with pytest.raises(ConfigError, match=match) as e:
        _loop(dataset=data, loss="mse").run()
    assert e.value.field == "loss"


def test_unknown_backend_option() -> None:
    with pytest.raises(ConfigError, match="steps_per_call") as e:
        _loop(backend_options={"steps_per_call": 5}).run()
    assert e.value.field == "backend_options.steps_per_call"


def test_steps_per_execution_not_dividing_the_cadence() -> None:
    with pytest.raises(ConfigError, match="must be a multiple of it"):
        _loop(log_every_n_steps=5, backend_options={"steps_per_execution": 2}).run()


def test_checkpoint_of_another_model_is_checkpoint_error(tmp_path: Path) -> None:
    ckpt = tmp_path / "ckpt"
    _loop(checkpoint_dir=str(ckpt), callbacks=[Checkpoint(every_n_steps=5)]).run()
    before = sorted(p.name for p in ckpt.iterdir())
    other = mlp(hidden=48)
    with pytest.raises(CheckpointError, match="model_structure"):
        _loop(
            model_op=other, checkpoint_dir=str(ckpt), callbacks=[Checkpoint(every_n_steps=5)]
        ).run()
    _no_step_ran(other)
    assert sorted(p.name for p in ckpt.iterdir()) == before


def test_task_that_is_not_a_keras_task() -> None:
    with pytest.raises(ConfigError, match="KerasTask") as e:
        _loop(task=object(), loss=None).run()
    assert e.value.field == "task"


def test_keras_model_op_rejects_a_non_model() -> None:
    from pipekit_train.adapters.keras import KerasModelOp

    with pytest.raises(ConfigError, match="needs a keras.Model"):
        KerasModelOp(keras.layers.Dense(3))


def test_accumulation_with_steps_per_execution_is_refused_before_fit() -> None:
    model = mlp()
    with pytest.raises(ConfigError, match="micro-batches") as e:
        _loop(model_op=model, accumulate_steps=2, backend_options={"steps_per_execution": 2}).run()
    assert e.value.field == "backend_options.steps_per_execution"
    _no_step_ran(model)
