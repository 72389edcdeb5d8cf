"""optax's ``reduce_on_plateau`` example trains as its users wrote it (issue 36, item 8).

optax's own example (docs, ``contrib/reduce_on_plateau``) chains
``contrib.reduce_on_plateau`` after the optimiser and calls
``opt.update(grads, opt_state, params, value=loss)``: the transformation reads the loss.
Given as ``optimizer_config``, the backend passes the step's loss as ``value`` the same
way. Shrunk to a small synthetic problem with a short ``accumulation_size`` and
``patience`` so that the scale really drops within the run; the final parameters and
every step's loss must equal the hand-written loop's bit for bit, fused and not.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
import pytest
from _eqx_helpers import make_data, make_module
from _hand_loop import assert_same_bits, hand_loop
from optax import contrib
from optax import tree_utils as otu

from pipekit_train import Callback, TrainingLoop

STEPS, BATCH, SEED = 24, 16, 0


def optimizer() -> optax.GradientTransformation:
    # The upstream example's chain, with its constants shrunk for a 24-step run.
    return optax.chain(
        optax.adam(1e-2),
        contrib.reduce_on_plateau(
            patience=1, cooldown=0, factor=0.5, rtol=0.5, accumulation_size=3
        ),
    )


def loss(model, x, y):
    logits = jax.vmap(model)(x)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


class Task:
    def loss_fn(self, model, batch, key):
        return loss(model, batch["x"], batch["y"]), {}


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state):
        self.loss.extend(state.window["loss"])


@pytest.mark.parametrize("k", [1, 6])
def test_reduce_on_plateau_reads_the_loss(k: int) -> None:
    data = make_data(96)
    kwargs = {"steps": STEPS, "batch": BATCH, "seed": SEED, "pass_value": True}
    want, opt_state, want_losses = hand_loop(make_module(), optimizer(), data, loss, **kwargs)
    assert float(otu.tree_get(opt_state, "scale")) < 1.0  # the plateau logic really acted
    rec = Losses()
    op, _ = TrainingLoop(
        model_op=make_module(),
        dataset=data,
        task=Task(),
        batch_size=BATCH,
        max_steps=STEPS,
        log_every_n_steps=6,
        optimizer_config=optimizer(),
        callbacks=[rec],
        seed=SEED,
        backend_options={"steps_per_call": k},
    ).run()
    assert_same_bits(op.module, want)
    assert rec.loss == want_losses
