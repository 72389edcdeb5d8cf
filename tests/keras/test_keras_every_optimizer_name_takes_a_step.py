"""Every optimiser name the keras backend supports trains; optax-style keywords map."""

from __future__ import annotations

import keras
import numpy as np
import pytest
from _keras_helpers import digits, mlp

from pipekit_train import TrainingLoop
from pipekit_train.adapters.keras import KERAS_OPTIMIZERS

REQUIRED = {
    "adam", "adamw", "sgd", "rmsprop", "lion", "adafactor", "nadam", "adagrad", "adadelta",
    "adamax",
}  # fmt: skip


def test_the_required_names_are_supported() -> None:
    assert REQUIRED <= set(KERAS_OPTIMIZERS)


@pytest.mark.parametrize("name", sorted(KERAS_OPTIMIZERS))
def test_optimizer_takes_steps_and_changes_the_weights(name: str) -> None:
    model = mlp(hidden=8)
    before = [np.array(v.value) for v in model.trainable_variables]
    lr = 1.0 if name in ("adadelta",) else 1e-2
    TrainingLoop(
        model_op=model,
        dataset=digits(64),
        loss="cross_entropy",
        batch_size=32,
        max_steps=3,
        optimizer_config={"name": name, "lr": lr},
        backend="keras",
    ).run()
    assert int(np.asarray(model.optimizer.iterations.value)) == 3
    after = [np.array(v.value) for v in model.trainable_variables]
    assert any(not np.array_equal(a, b) for a, b in zip(before, after, strict=True))


def test_optax_keywords_clip_norm_and_weight_decay_reach_the_keras_optimizer() -> None:
    model = mlp(hidden=8)
    config = {"name": "adamw", "lr": 1e-3, "b1": 0.8, "b2": 0.95, "eps": 1e-6, "clip_norm": 0.5}
    config["weight_decay"] = 0.02
    TrainingLoop(
        model_op=model, dataset=digits(64), loss="cross_entropy", batch_size=32, max_steps=1,
        optimizer_config=config, backend="keras",
    ).run()  # fmt: skip
    opt = model.optimizer
    assert isinstance(opt, keras.optimizers.AdamW)
    assert (opt.beta_1, opt.beta_2, opt.epsilon) == (0.8, 0.95, 1e-6)
    assert opt.global_clipnorm == 0.5 and opt.weight_decay == 0.02


def test_sgd_momentum_and_amsgrad() -> None:
    from pipekit_train.adapters.keras._optim import resolve_keras_optimizer

    sgd = resolve_keras_optimizer(keras, {"name": "sgd", "lr": 0.1, "momentum": 0.9}, 10)
    assert isinstance(sgd, keras.optimizers.SGD) and sgd.momentum == 0.9
    ams = resolve_keras_optimizer(keras, {"name": "amsgrad", "lr": 0.1}, 10)
    assert isinstance(ams, keras.optimizers.Adam) and ams.amsgrad
