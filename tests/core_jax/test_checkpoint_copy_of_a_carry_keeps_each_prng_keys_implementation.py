"""The copy of the carry a checkpoint saves keeps each typed PRNG key's implementation: an
``rbg`` or ``unsafe_rbg`` key in the carry is saved as that key (same data, same impl), not
re-wrapped as the default threefry key, and a run over it resumes to the same draws."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from pipekit_train.jax.program import build_program


def _step(carry: dict[str, Any], batch: Any, key: jax.Array) -> tuple[Any, ...]:
    key, sub = jax.random.split(carry["key"])
    x = carry["x"] + jax.random.normal(sub, (3,))
    return {"key": key, "x": x}, {"norm": jnp.sum(x**2)}


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", "unsafe_rbg"])
def test_the_saved_copy_of_a_key_is_the_same_key(impl: str) -> None:
    carry = {"key": jax.random.key(7, impl=impl), "x": jnp.zeros((3,), jnp.float32)}
    program = build_program(_step, carry, base_key=jax.random.key(0))
    leaves = jax.tree_util.tree_leaves(carry)
    leaves = program.train_chunk(leaves, None, 0, 2)[0]
    saved = program.checkpoint_state(leaves)
    live = program.tree(leaves)
    assert jax.random.key_impl(saved["key"]) == jax.random.key_impl(live["key"])
    assert str(jax.random.key_impl(saved["key"])) == str(jax.random.key_impl(carry["key"]))
    np.testing.assert_array_equal(
        jax.random.key_data(saved["key"]), jax.random.key_data(live["key"])
    )
    # The saved key draws what the live one draws.
    np.testing.assert_array_equal(
        jax.random.normal(saved["key"], (4,)), jax.random.normal(live["key"], (4,))
    )
