"""optax's ``chain`` example trains as its users wrote it (issue 36, item 8).

optax's docs chain gradient clipping, AdamW and a warm-up cosine schedule::

    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=1.0, warmup_steps=50, decay_steps=1_000, end_value=0.0)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(learning_rate=schedule))

Given as ``optimizer_config`` (shrunk to 30 steps on a small synthetic problem), the
final parameters and every step's loss equal the hand-written loop's bit for bit,
fused and not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest
from _eqx_helpers import make_data, make_module
from _hand_loop import assert_same_bits, hand_loop

from pipekit_train import Callback, TrainingLoop

STEPS, BATCH, SEED = 30, 16, 0


def optimizer() -> optax.GradientTransformation:
    schedule = optax.warmup_cosine_decay_schedule(
        init_value=0.0, peak_value=1e-2, warmup_steps=5, decay_steps=30, end_value=0.0
    )
    return optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(learning_rate=schedule))


def loss(model, x, y):
    logits = jax.vmap(model)(x)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state):
        self.loss.extend(state.window["loss"])


@pytest.mark.parametrize("k", [1, 10])
def test_chain_example_equals_the_hand_loop(k: int) -> None:
    data = make_data(96)
    want, _, want_losses = hand_loop(
        make_module(), optimizer(), data, loss, steps=STEPS, batch=BATCH, seed=SEED
    )
    rec = Losses()
    op, _ = TrainingLoop(
        model_op=make_module(),
        dataset=data,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=STEPS,
        log_every_n_steps=10,
        optimizer_config=optimizer(),
        callbacks=[rec],
        seed=SEED,
        backend_options={"steps_per_call": k},
    ).run()
    assert_same_bits(op.module, want)
    assert rec.loss == want_losses
