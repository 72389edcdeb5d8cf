"""A hand-written Equinox + Optax loop for the "examples from the library's own docs" tests.

Written from the documented contract alone (no pipekit code): step ``s`` reads rows
``j*B … (j+1)*B`` of epoch ``e``'s permutation ``default_rng([seed, e]).permutation(n)``
with ``e, j = divmod(s, n // B)``; the update is the upstream example's own
``opt.update(grads, opt_state, params)`` (with ``value=loss`` where the example passes
it), one ``eqx.filter_jit`` call per step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import numpy as np
import optax


def hand_loop(
    model: Any,
    opt: optax.GradientTransformation,
    data: dict[str, np.ndarray],
    loss: Callable[[Any, Any, Any], Any],
    *,
    steps: int,
    batch: int,
    seed: int,
    pass_value: bool = False,
) -> tuple[Any, Any, list[float]]:
    """``(trained model, final opt_state, every step's loss)``; ``loss(model, x, y)``."""
    n = len(data["y"])
    opt_state = opt.init(eqx.filter(model, eqx.is_inexact_array))

    @eqx.filter_jit
    def make_step(model, opt_state, x, y):
        loss_value, grads = eqx.filter_value_and_grad(loss)(model, x, y)
        params = eqx.filter(model, eqx.is_inexact_array)
        extra = {"value": loss_value} if pass_value else {}
        updates, opt_state = opt.update(grads, opt_state, params, **extra)
        return eqx.apply_updates(model, updates), opt_state, loss_value

    losses = []
    for s in range(steps):
        epoch, j = divmod(s, n // batch)
        rows = np.random.default_rng([seed, epoch]).permutation(n)[j * batch : (j + 1) * batch]
        model, opt_state, value = make_step(model, opt_state, data["x"][rows], data["y"][rows])
        losses.append(float(value))
    return model, opt_state, losses


def arrays(model: Any) -> list[np.ndarray]:
    return [np.asarray(a) for a in jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_array))]


def assert_same_bits(got: Any, want: Any) -> None:
    a, b = arrays(got), arrays(want)
    assert len(a) == len(b) and a
    for x, y in zip(a, b, strict=True):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), np.max(np.abs(x - y))
