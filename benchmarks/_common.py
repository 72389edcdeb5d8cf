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
from _data import BATCH, LR, OPTIMIZER_CONFIG, digits
from _scan_ref import ScanLoop, make_model

from pipekit_train import Callback, Checkpoint, TrainingLoop

__all__ = [
    "BATCH",
    "LR",
    "ScanLoop",
    "digits",
    "make_model",
]  # re-exported: the cases import them from here


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


def scan_seconds_per_step(data: dict[str, np.ndarray], steps: int, k: int = 50) -> float:
    """Steady-state seconds per step of :class:`ScanLoop` (two warm-up chunks untimed)."""
    loop = ScanLoop(data, k)
    loop.run(2)
    chunks = max(1, steps // k)
    return loop.run(chunks) / (chunks * k)


def equinox_loop(
    data: dict[str, np.ndarray],
    *,
    max_steps: int,
    callbacks: list[Any],
    cache_dir: str | None = None,
    log_every: int = 50,
) -> TrainingLoop:
    """The bench's Equinox run at the default ``steps_per_call``, no checkpoint."""
    options: dict[str, Any] = {}
    if cache_dir is not None:
        options["compilation_cache"] = cache_dir
    return TrainingLoop(
        model_op=make_model(),
        dataset=data,
        loss="cross_entropy",
        batch_size=BATCH,
        max_steps=max_steps,
        optimizer_config=dict(OPTIMIZER_CONFIG),
        callbacks=callbacks,
        log_every_n_steps=log_every,
        seed=0,
        backend="equinox",
        backend_options=options,
    )
