"""A toy sampler-like program for the program builder's tests.

Four "chains" of a 3-dimensional state. A warmup phase adapts a per-chain scale;
the sampling phase draws. Each step emits a per-chain metric (``energy``, shape
``(4,)``) and a per-step output (``theta``, shape ``(4, 3)``) for the trace. A
NaN can be planted at one (step, chain) to test ``TerminateOnNaN``.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from pipekit_train import TrainingLoop
from pipekit_train.engine import Phase
from pipekit_train.jax.program import build_program

CHAINS, DIM = 4, 3


def initial_carry() -> dict[str, Any]:
    return {
        "theta": jnp.zeros((CHAINS, DIM), jnp.float32),
        "scale": jnp.ones((CHAINS,), jnp.float32),
        "count": jnp.zeros((), jnp.int32),
    }


def _move(carry: dict[str, Any], key: jax.Array, nan_at: tuple[int, int] | None) -> Any:
    noise = jax.random.normal(key, (CHAINS, DIM), jnp.float32)
    theta = 0.8 * carry["theta"] + carry["scale"][:, None] * noise
    if nan_at is not None:
        step, chain = nan_at
        hit = (carry["count"] + 1 == step) & (jnp.arange(CHAINS) == chain)
        theta = jnp.where(hit[:, None], jnp.nan, theta)
    return theta


def make_steps(nan_at: tuple[int, int] | None = None) -> tuple[Any, Any]:
    def warmup(carry: dict[str, Any], batch: Any, key: jax.Array) -> tuple[Any, ...]:
        theta = _move(carry, key, nan_at)
        scale = 0.9 * carry["scale"] + 0.1 * jnp.sqrt(jnp.mean(theta**2, axis=-1) + 1e-3)
        new = {"theta": theta, "scale": scale, "count": carry["count"] + 1}
        return new, {"energy": jnp.sum(theta**2, axis=-1)}, {"theta": theta}

    def sample(carry: dict[str, Any], batch: Any, key: jax.Array) -> tuple[Any, ...]:
        theta = _move(carry, key, nan_at)
        if batch is not None:
            theta = theta + 1e-3 * jnp.mean(batch["x"])
        new = {"theta": theta, "scale": carry["scale"], "count": carry["count"] + 1}
        return new, {"energy": jnp.sum(theta**2, axis=-1)}, {"theta": theta}

    return warmup, sample


def make_program(
    warmup_steps: int = 12,
    sample_steps: int = 30,
    *,
    nan_at: tuple[int, int] | None = None,
    fixed_chunk: int | None = None,
    seed: int = 0,
) -> Any:
    warmup, sample = make_steps(nan_at)
    return build_program(
        sample,
        initial_carry(),
        base_key=jax.random.PRNGKey(seed),
        phases=[Phase("warmup", warmup_steps, collect=False), Phase("sampling", sample_steps)],
        phase_steps={"warmup": warmup},
        fixed_chunk=fixed_chunk,
    )


def toy_loop(**overrides: Any) -> TrainingLoop:
    kwargs: dict[str, Any] = {
        "dataset": {"x": np.zeros((8, 1), np.float32), "y": np.zeros(8, np.float32)},
        "loss": "mse",
        "max_steps": 1,  # not used: the program's phases set the length
        "log_every_n_steps": 5,
        "batch_size": 4,
    }
    kwargs.update(overrides)
    return TrainingLoop(**kwargs)


def as_numpy(tree: Any) -> Any:
    return jax.tree_util.tree_map(np.asarray, tree)
