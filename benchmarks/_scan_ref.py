"""The hand-written fused Equinox loop (case 8's reference, the whole-run suite's peer).

JAX, Equinox and optax only (no pipekit-train): the whole-run suite runs it as a plain
script in a fresh process, which must not import what a user's script would not.
"""

from __future__ import annotations

import time
from typing import Any

import equinox as eqx
import jax
import numpy as np
import optax
from _data import BATCH, LR

_optimizer = optax.adamw(LR)


def make_model(seed: int = 0) -> eqx.nn.MLP:
    return eqx.nn.MLP(64, 10, 256, 2, key=jax.random.PRNGKey(seed))


class ScanLoop:
    """The fastest loop a user would write by hand: ``K`` steps per ``jax.jit`` call.

    The inexact leaves of the model and the optimiser state are the jitted function's
    arguments and are donated; ``lax.scan`` runs ``K`` AdamW steps over ``K`` stacked
    batches, gathered with one numpy fancy index per chunk from a per-epoch permutation.
    Like a loop that logs every ``K`` steps, it fetches the last loss of each chunk
    (``float``): one device-to-host transfer per chunk, as the backend's log step does.
    """

    def __init__(self, data: dict[str, np.ndarray], k: int = 50, seed: int = 0) -> None:
        self.x, self.y, self.k = data["x"], data["y"], k
        self.n = len(self.x)
        self.steps_per_epoch = self.n // BATCH
        self.params, static = eqx.partition(make_model(seed), eqx.is_inexact_array)
        self.opt_state = _optimizer.init(self.params)
        self.rng = np.random.default_rng(seed)
        self.perm, self.j = self.rng.permutation(self.n), 0

        def step(carry: Any, batch: Any) -> tuple[Any, jax.Array]:
            params, opt_state = carry
            x, y = batch

            def loss_fn(p: Any) -> jax.Array:
                logits = jax.vmap(eqx.combine(p, static))(x)
                return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

            loss, grads = jax.value_and_grad(loss_fn)(params)
            updates, opt_state = _optimizer.update(grads, opt_state, params)
            return (optax.apply_updates(params, updates), opt_state), loss

        def chunk(params: Any, opt_state: Any, xs: Any, ys: Any) -> tuple[Any, Any, jax.Array]:
            (params, opt_state), losses = jax.lax.scan(step, (params, opt_state), (xs, ys))
            return params, opt_state, losses

        self._chunk = jax.jit(chunk, donate_argnums=(0, 1))

    def _indices(self) -> np.ndarray:
        parts = []
        for _ in range(self.k):
            if self.j == self.steps_per_epoch:
                self.perm, self.j = self.rng.permutation(self.n), 0
            parts.append(self.perm[self.j * BATCH : (self.j + 1) * BATCH])
            self.j += 1
        return np.concatenate(parts)

    def run(self, chunks: int) -> float:
        """Run ``chunks`` chunks of ``K`` steps; return their wall time (synced)."""
        start = time.perf_counter()
        params, opt_state = self.params, self.opt_state
        for _ in range(chunks):
            idx = self._indices()
            xs = self.x[idx].reshape(self.k, BATCH, -1)
            ys = self.y[idx].reshape(self.k, BATCH)
            params, opt_state, losses = self._chunk(params, opt_state, xs, ys)
            float(losses[-1])  # the log step's fetch
        jax.block_until_ready((params, opt_state))
        self.params, self.opt_state = params, opt_state
        return time.perf_counter() - start
