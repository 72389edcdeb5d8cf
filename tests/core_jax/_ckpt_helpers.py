"""A small training-like state, a data iterator and a fingerprint for the checkpoint tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import pipekit_train.errors
from pipekit_train.engine import BatchIterator, BatchSource

# The folder holding the ``pipekit_train`` under test (src/ or site-packages), for subprocesses.
PACKAGE_ROOT = str(Path(pipekit_train.errors.__file__).resolve().parents[1])

FINGERPRINT = {
    "model": "mlp-3-8-2",
    "optimizer": {"name": "adam", "lr": 0.01},
    "dataset_len": 40,
    "batch_size": 8,
    "seed": 0,
    "backend": "equinox",
}


def make_state(value: float = 0.0, width: int = 8) -> dict:
    """A pytree like a TrainState: params, an optimiser-ish nested tuple, step and a typed key."""
    return {
        "params": {
            "w": jnp.full((3, width), value, jnp.float32),
            "b": jnp.arange(width, dtype=jnp.float32) + value,
        },
        "opt": (jnp.zeros((3, width)) + 2 * value, {"count": jnp.asarray(int(value), jnp.int32)}),
        "step": jnp.asarray(int(value), jnp.int32),
        "rng": jax.random.fold_in(jax.random.key(0), int(value)),
    }


def template(width: int = 8) -> dict:
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=a.sharding),
        make_state(0.0, width),
    )


def data_iterator() -> BatchIterator:
    x = np.arange(40 * 3, dtype=np.float32).reshape(40, 3)
    return BatchIterator(BatchSource({"x": x, "y": np.arange(40)}, 8, seed=0))


def assert_state_equal(a, b) -> None:
    leaves_a = jax.tree.leaves(
        jax.tree.map(
            lambda v: jax.random.key_data(v) if jnp.issubdtype(v.dtype, jax.dtypes.prng_key) else v,
            a,
        )
    )
    leaves_b = jax.tree.leaves(
        jax.tree.map(
            lambda v: jax.random.key_data(v) if jnp.issubdtype(v.dtype, jax.dtypes.prng_key) else v,
            b,
        )
    )
    assert jax.tree.structure(a) == jax.tree.structure(b)
    for x, y in zip(leaves_a, leaves_b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def child_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (PACKAGE_ROOT, str(Path(__file__).parent), env.get("PYTHONPATH", "")) if p
    )
    env.update(extra)
    return env


PYTHON = sys.executable
