"""``precision="mixed-bfloat16"`` and ``"bfloat16"`` train on CPU, with the documented dtypes.

- ``mixed-bfloat16``: the parameters stay float32 (the op's leaves are float32),
  the forward and backward passes run in bfloat16 — so the result differs from a
  float32 run — and the loss goes down.
- ``bfloat16``: parameters (and so the op) are bfloat16, and the loss goes down.

Loss decrease: the mean of the last 5 steps' losses is below 70 % of the first 5's
over 60 adam steps on the 3-class toy problem (float32 goes from ~1.1 to ~0.3).
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
from _eqx_helpers import leaves, make_data, run_loop, tiny_loop

from pipekit_train import Callback


class Losses(Callback):
    def __init__(self) -> None:
        self.loss: list[float] = []

    def on_step_end(self, loop, state) -> None:
        self.loss.extend(float(v) for v in state.window["loss"])


def _train(precision: str):
    rec = Losses()
    op, info = run_loop(
        tiny_loop(
            dataset=make_data(256),
            batch_size=32,
            max_steps=60,
            precision=precision,
            callbacks=[rec],
            val_dataset=make_data(32, seed=2),
        )
    )
    return op, info, rec.loss


@pytest.mark.parametrize(
    ("precision", "dtype"), [("mixed-bfloat16", jnp.float32), ("bfloat16", jnp.bfloat16)]
)
def test_precision_trains_with_the_documented_parameter_dtype(precision, dtype):
    op, info, loss = _train(precision)
    assert len(loss) == 60 and all(np.isfinite(loss))
    assert np.mean(loss[-5:]) < 0.7 * np.mean(loss[:5]), loss
    assert info["features"]["precision"] == precision
    assert {a.dtype for a in leaves(op)} == {np.dtype(dtype)}
    assert np.isfinite(info["final_metrics"]["val_loss"])
    assert np.asarray(op(make_data(4, seed=3)["x"])).shape == (4, 3)


def test_mixed_precision_computes_in_bfloat16():
    """Same data and seed: the bf16 forward/backward gives other float32 weights."""
    mixed, _, _ = _train("mixed-bfloat16")
    full, _, _ = _train("float32")
    assert any(not np.array_equal(a, b) for a, b in zip(leaves(mixed), leaves(full), strict=True))
    for a, b in zip(leaves(mixed), leaves(full), strict=True):
        np.testing.assert_allclose(a, b, atol=0.1)
