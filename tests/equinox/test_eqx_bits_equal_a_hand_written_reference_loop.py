"""The Equinox backend, through core's program builder and driver, computes exactly what an
independent hand-written Equinox + Optax loop computes.

The reference loop below is written here from the documented contract alone (no pipekit
code): step ``s`` (0-based) uses ``fold_in(split(PRNGKey(seed))[0], s)``, batch ``s`` takes rows
``j*B … (j+1)*B`` of epoch ``e``'s permutation ``default_rng([seed, e]).permutation(n)`` with
``e, j = divmod(s, n // B)``, the optimiser is ``optax.inject_hyperparams(<name>)(learning_rate=…)``
and the loss the mean softmax cross-entropy of the vmapped model. It runs one ``jax.jit``
call per step. The backend's final parameters and every step's loss must equal it bit for
bit, unfused (K = 1) and fused (K = 50) with checkpoints, for a plain MLP and one with
dropout (so the per-step keys are covered), with a constant rate and a cosine schedule.

Both sides run in the same process on the same machine: XLA's CPU code depends on the
instruction set (AVX-512 or not) and so do the bits, so nothing here is compared against
values recorded on another machine (docs/decisions/0002-tests-compare-two-runs.md).
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest
from _eqx_helpers import make_data, make_module

from pipekit_train import Callback, Checkpoint, TrainingLoop

STEPS, BATCH, SEED, LR = 37, 16, 0, 1e-2


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


def _model(name: str) -> eqx.Module:
    return make_module() if name == "mlp" else DropMLP(make_module(), eqx.nn.Dropout(0.2))


def _backend(model, schedule: bool, k: int, ckpt_dir) -> tuple[list[np.ndarray], np.ndarray]:
    rec = Losses()
    lr = {"schedule": "cosine_decay", "init_value": LR} if schedule else LR
    loop = TrainingLoop(
        model_op=model,
        dataset=make_data(96),
        val_dataset=make_data(16, seed=1),
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=STEPS,
        log_every_n_steps=10,
        eval_every_n_steps=9,
        optimizer_config={"name": "adamw" if schedule else "adam", "lr": lr},
        callbacks=[rec] + ([Checkpoint(every_n_steps=12)] if ckpt_dir else []),
        checkpoint_dir=ckpt_dir,
        seed=SEED,
        backend_options={"steps_per_call": k},
    )
    op, _ = loop.run()
    leaves = jax.tree_util.tree_leaves(eqx.filter(op.module, eqx.is_array))
    return [np.asarray(x) for x in leaves], np.asarray(rec.loss, np.float32)


def _reference(model, schedule: bool) -> tuple[list[np.ndarray], np.ndarray]:
    """The hand-written loop: plain Equinox + Optax, one jitted call per step."""
    data = make_data(96)
    n = len(data["y"])
    if schedule:
        opt = optax.inject_hyperparams(optax.adamw)(
            learning_rate=optax.cosine_decay_schedule(LR, decay_steps=STEPS)
        )
    else:
        opt = optax.inject_hyperparams(optax.adam)(learning_rate=LR)
    params, static = eqx.partition(model, eqx.is_inexact_array)
    opt_state = opt.init(params)
    base_key = jax.random.split(jax.random.PRNGKey(SEED))[0]
    takes_key = isinstance(model, DropMLP)

    @jax.jit
    def step(params, opt_state, x, y, s):
        key = jax.random.fold_in(base_key, s)

        def loss_of(p):
            m = eqx.combine(p, static)
            if takes_key:
                keys = jax.random.split(key, x.shape[0])
                logits = jax.vmap(lambda xi, ki: m(xi, key=ki))(x, keys)
            else:
                logits = jax.vmap(m)(x)
            return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))

        loss, grads = jax.value_and_grad(loss_of)(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    losses = []
    for s in range(STEPS):
        epoch, j = divmod(s, n // BATCH)
        rows = np.random.default_rng([SEED, epoch]).permutation(n)[j * BATCH : (j + 1) * BATCH]
        params, opt_state, loss = step(
            params, opt_state, data["x"][rows], data["y"][rows], jnp.asarray(s, jnp.int32)
        )
        losses.append(float(loss))
    leaves = jax.tree_util.tree_leaves(eqx.filter(eqx.combine(params, static), eqx.is_array))
    return [np.asarray(x) for x in leaves], np.asarray(losses, np.float32)


def _assert_same_bits(got, want) -> None:
    (got_leaves, got_loss), (want_leaves, want_loss) = got, want
    assert got_loss.tobytes() == want_loss.tobytes(), np.max(np.abs(got_loss - want_loss))
    assert len(got_leaves) == len(want_leaves)
    for a, b in zip(got_leaves, want_leaves, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), np.max(np.abs(a - b))


@pytest.mark.parametrize("schedule", [False, True], ids=["constant", "cosine"])
@pytest.mark.parametrize("name", ["mlp", "dropout"])
def test_same_bits_as_a_hand_written_loop(tmp_path, name, schedule):
    want = _reference(_model(name), schedule)
    _assert_same_bits(_backend(_model(name), schedule, 1, None), want)
    _assert_same_bits(_backend(_model(name), schedule, 50, str(tmp_path / "ck")), want)
