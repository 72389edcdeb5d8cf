"""Shared pieces of the benchmarks: data, model, the references and the timed backend runs.

Everything trains the digits MLP 64-256-256-10 (``eqx.nn.MLP(64, 10, 256, 2)``) on
scikit-learn's ``load_digits`` (x / 16 as float32, int32 labels, all 1797 rows), batch
128, AdamW (lr 1e-3, optax's default weight decay), softmax cross-entropy.

Timing rule: only steady-state steps are timed (after compilation and warm-up), and every
timed window ends on a device sync, so asynchronous dispatch cannot hide work.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import equinox as eqx
import jax
import numpy as np
import optax

from pipekit_train import Callback, Checkpoint, TrainingLoop

BATCH = 128
LR = 1e-3
OPTIMIZER_CONFIG: dict[str, Any] = {"name": "adamw", "lr": LR}


def digits() -> dict[str, np.ndarray]:
    """All of sklearn's digits: ``{"x": float32 [1797, 64] in [0, 1], "y": int32 [1797]}``."""
    from sklearn.datasets import load_digits

    d = load_digits()
    return {"x": (d.data / 16.0).astype(np.float32), "y": d.target.astype(np.int32)}


def make_model(seed: int = 0) -> eqx.nn.MLP:
    return eqx.nn.MLP(64, 10, 256, 2, key=jax.random.PRNGKey(seed))


# -- statistics -------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def paired_ratio(reference: Sequence[float], ours: Sequence[float]) -> float:
    """Median over the interleaved pairs of ``reference / ours`` (both are times).

    Pairing cancels most of the drift in machine load between repeats: the two members
    of a pair ran back to back.
    """
    return median([r / o for r, o in zip(reference, ours, strict=True)])


# -- the hand-written reference loop ----------------------------------------------------------

_hand_optimizer = optax.adamw(LR)


@eqx.filter_jit
def hand_step(model: Any, opt_state: Any, x: jax.Array, y: jax.Array) -> tuple[Any, Any, Any]:
    """The step a user writes by hand: ``eqx.filter_jit``, vmapped model, optax AdamW."""

    def loss_fn(m: Any) -> jax.Array:
        logits = jax.vmap(m)(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
    updates, opt_state = _hand_optimizer.update(
        grads, opt_state, eqx.filter(model, eqx.is_inexact_array)
    )
    return eqx.apply_updates(model, updates), opt_state, loss


class HandLoop:
    """A hand-written training loop: per-epoch permutation, numpy fancy-index batches.

    ``float()`` is never called per step; the only sync is at the end of a timed window.
    """

    def __init__(self, data: dict[str, np.ndarray], seed: int = 0) -> None:
        self.x, self.y = data["x"], data["y"]
        self.n = len(self.x)
        self.steps_per_epoch = self.n // BATCH
        self.model = make_model(seed)
        self.opt_state = _hand_optimizer.init(eqx.filter(self.model, eqx.is_inexact_array))
        self.rng = np.random.default_rng(seed)
        self.perm = self.rng.permutation(self.n)
        self.j = 0

    def run(self, steps: int) -> float:
        """Run ``steps`` steps; return their wall time (synced at the end)."""
        start = time.perf_counter()
        model, opt_state, loss = self.model, self.opt_state, None
        for _ in range(steps):
            if self.j == self.steps_per_epoch:
                self.perm, self.j = self.rng.permutation(self.n), 0
            idx = self.perm[self.j * BATCH : (self.j + 1) * BATCH]
            self.j += 1
            model, opt_state, loss = hand_step(model, opt_state, self.x[idx], self.y[idx])
        jax.block_until_ready((model, opt_state, loss))
        elapsed = time.perf_counter() - start
        self.model, self.opt_state = model, opt_state
        return elapsed


def hand_seconds_per_step(data: dict[str, np.ndarray], steps: int, warmup: int = 50) -> float:
    loop = HandLoop(data)
    loop.run(warmup)
    return loop.run(steps) / steps


# -- the backend through the real loop.run() ---------------------------------------------------


class Stamps(Callback):
    """A callback recording ``perf_counter`` at every host event.

    ``on_step_end`` runs right after the driver fetched the window's metrics, which
    depend on every step of the window: the stamp is taken after the device finished.
    It sets no ``every_n_steps``, so it adds no chunk boundaries.
    """

    def __init__(self) -> None:
        self.at: dict[int, float] = {}

    def on_step_end(self, loop: Any, state: Any) -> None:
        self.at[int(state.step)] = time.perf_counter()


@dataclass
class BackendRun:
    seconds_per_step: float
    info: dict[str, Any]


def backend_seconds_per_step(
    data: dict[str, np.ndarray],
    *,
    steps_per_call: int | None,
    start: int,
    window: int,
    log_every: int = 50,
    checkpoint_every: int | str | None = None,
    keep_last: int = 2,
    cache_dir: str | None = None,
    backend_options: dict[str, Any] | None = None,
    **loop_fields: Any,
) -> BackendRun:
    """Time steps ``(start, start + window]`` of a real ``TrainingLoop(...).run()``.

    ``start`` and ``start + window`` must be host events (multiples of ``log_every``);
    the steps before ``start`` are the warm-up (compilation, first checkpoint's
    one-time setup). The run ends at ``start + window``; its final checkpoint and the
    wait for pending writes fall outside the window. ``loop_fields`` are further
    ``TrainingLoop`` fields (the training features of case 9). ``checkpoint_every="default"``
    checkpoints at ``Checkpoint()``'s default cadence.
    """
    if start % log_every or window % log_every:
        raise ValueError("start and window must be multiples of log_every")
    stamps = Stamps()
    callbacks: list[Any] = [stamps]
    options: dict[str, Any] = dict(backend_options or {})
    if steps_per_call is not None:
        options["steps_per_call"] = steps_per_call
    if cache_dir is not None:
        options["compilation_cache"] = cache_dir
    with tempfile.TemporaryDirectory(prefix="pipekit-bench-ckpt-") as tmp:
        checkpoint_dir = None
        if checkpoint_every is not None:
            checkpoint_dir = tmp
            every = None if checkpoint_every == "default" else int(checkpoint_every)
            callbacks.append(Checkpoint(every_n_steps=every, keep_last=keep_last))
        loop = TrainingLoop(
            model_op=make_model(),
            dataset=data,
            loss="cross_entropy",
            batch_size=BATCH,
            max_steps=start + window,
            optimizer_config=dict(OPTIMIZER_CONFIG),
            callbacks=callbacks,
            checkpoint_dir=checkpoint_dir,
            log_every_n_steps=log_every,
            seed=0,
            backend="equinox",
            backend_options=options,
            **loop_fields,
        )
        _, info = loop.run()
    at = stamps.at
    return BackendRun((at[start + window] - at[start]) / window, info)


# -- the hand-written fused reference: jax.jit + donation + lax.scan ---------------------------


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
        self.opt_state = _hand_optimizer.init(self.params)
        self.rng = np.random.default_rng(seed)
        self.perm, self.j = self.rng.permutation(self.n), 0

        def step(carry: Any, batch: Any) -> tuple[Any, jax.Array]:
            params, opt_state = carry
            x, y = batch

            def loss_fn(p: Any) -> jax.Array:
                logits = jax.vmap(eqx.combine(p, static))(x)
                return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

            loss, grads = jax.value_and_grad(loss_fn)(params)
            updates, opt_state = _hand_optimizer.update(grads, opt_state, params)
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


def scan_seconds_per_step(data: dict[str, np.ndarray], steps: int, k: int = 50) -> float:
    """Steady-state seconds per step of :class:`ScanLoop` (two warm-up chunks untimed)."""
    loop = ScanLoop(data, k)
    loop.run(2)
    chunks = max(1, steps // k)
    return loop.run(chunks) / (chunks * k)
