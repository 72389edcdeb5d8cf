"""A ``grain.MapDataset`` the user shuffled trains in its own order (issue 36, item 4).

The user's pipeline is Grain's own idiom, ``MapDataset.source(records).shuffle(seed)``
(then ``.map``); pipekit must read it in that order, with the later epochs as Grain
defines them (epoch ``e`` reshuffled with ``seed + e``, what ``.repeat()`` yields), not
reshuffle it with its own permutation. The reference is a hand-written Equinox + Optax
loop over Grain's own batching of the same pipeline, ``ds.repeat().batch(B)[s]`` for
step ``s``: the backend's final parameters and every step's loss must equal it bit for
bit, over more than one epoch (96 records, batch 16: 6 batches an epoch, 15 steps), fused
(``steps_per_call=5``) and not.
"""

from __future__ import annotations

import equinox as eqx
import grain
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _eqx_helpers import leaves, make_data, make_module

from pipekit_train import Callback, TrainingLoop

STEPS, BATCH, SEED, LR = 15, 16, 3, 1e-2


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state):
        self.loss.extend(state.window["loss"])


def pipeline() -> grain.MapDataset:
    data = make_data(96)
    records = [{"x": data["x"][i], "y": data["y"][i]} for i in range(96)]
    return (
        grain.MapDataset.source(records)
        .shuffle(seed=5)
        .map(lambda r: {"x": r["x"] * 2.0, "y": r["y"]})
    )


def hand_loop() -> tuple[list[np.ndarray], list[float]]:
    batches = pipeline().repeat().batch(BATCH)  # Grain's own batching of the same pipeline
    opt = optax.adam(LR)
    params, static = eqx.partition(make_module(), eqx.is_inexact_array)
    opt_state = opt.init(params)

    @jax.jit
    def step(params, opt_state, x, y):
        def loss_of(p):
            logits = jax.vmap(eqx.combine(p, static))(x)
            return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))

        loss, grads = jax.value_and_grad(loss_of)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for s in range(STEPS):
        batch = batches[s]
        params, opt_state, loss = step(params, opt_state, batch["x"], batch["y"])
        losses.append(float(loss))
    return leaves(eqx.combine(params, static)), losses


@pytest.mark.parametrize("k", [1, 5])
def test_map_dataset_order_is_the_users(k: int) -> None:
    rec = Losses()
    op, _ = TrainingLoop(
        model_op=make_module(),
        dataset=pipeline(),
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=STEPS,
        log_every_n_steps=5,
        optimizer_config=optax.adam(LR),
        callbacks=[rec],
        seed=SEED,
        backend_options={"steps_per_call": k},
    ).run()
    want, want_losses = hand_loop()
    got = leaves(op)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.tobytes() == b.tobytes()
    assert rec.loss == want_losses
