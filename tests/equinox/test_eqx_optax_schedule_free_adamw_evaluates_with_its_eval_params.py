"""optax's ``schedule_free_adamw`` trains and evaluates as optax documents (issue 36, item 8).

Schedule-free optimisers train one sequence of parameters and evaluate another: optax's
example trains with ``optax.contrib.schedule_free_adamw`` and evaluates with
``optax.contrib.schedule_free_eval_params(opt_state, params)``. Given as
``optimizer_config``, the backend hands on the evaluation parameters as the trained op
(and evaluates ``val_dataset`` with them): bit for bit the hand-written loop's
``schedule_free_eval_params`` of its final state, and the validation loss is that
model's. ``ema_decay`` with one (two averages of the iterates) is a ConfigError.
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _eqx_helpers import make_data, make_module
from _hand_loop import assert_same_bits, hand_loop

from pipekit_train import ConfigError, TrainingLoop

STEPS, BATCH, SEED = 20, 16, 0
VAL = make_data(32, seed=1)


def optimizer() -> optax.GradientTransformation:
    return optax.contrib.schedule_free_adamw(learning_rate=1e-2, warmup_steps=5)


def loss(model, x, y):
    logits = jax.vmap(model)(x)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


def _loop(**extra) -> TrainingLoop:
    return TrainingLoop(
        model_op=make_module(),
        dataset=make_data(96),
        val_dataset=VAL,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=STEPS,
        eval_every_n_steps=STEPS,
        optimizer_config=optimizer(),
        seed=SEED,
        **extra,
    )


def test_the_trained_op_is_the_eval_params() -> None:
    trained, opt_state, _ = hand_loop(
        make_module(), optimizer(), make_data(96), loss, steps=STEPS, batch=BATCH, seed=SEED
    )
    params, static = eqx.partition(trained, eqx.is_inexact_array)
    want = eqx.combine(optax.contrib.schedule_free_eval_params(opt_state, params), static)
    op, info = _loop().run()
    assert_same_bits(op.module, want)
    val_loss = float(loss(want, VAL["x"], VAL["y"]))
    np.testing.assert_allclose(info["final_metrics"]["val_loss"], val_loss, rtol=1e-6)
    assert float(loss(trained, VAL["x"], VAL["y"])) != val_loss  # the two sequences differ


def test_ema_with_a_schedule_free_optimizer_is_refused() -> None:
    with pytest.raises(ConfigError, match="schedule_free_eval_params") as e:
        _loop(ema_decay=0.99).run()
    assert e.value.field == "ema_decay"
