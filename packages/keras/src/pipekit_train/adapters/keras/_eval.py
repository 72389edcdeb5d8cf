"""Evaluation on ``val_dataset`` at exact steps, outside Keras' own metric state.

Keras validates only at epoch ends and shares its metric variables between
training and ``evaluate``. Here one jitted, stateless function
(``model.stateless_call`` in inference mode) computes the loss (and accuracy for
a classification loss) per batch from the synced variables; the results are
averaged over all rows. The model's compiled metrics (``compile(metrics=[...])``) are
accumulated over all of ``val`` through their stateless API from a reset state, and
reported under their own names (``accuracy`` → ``val_accuracy``), as ``fit`` reports
them; a compiled ``accuracy`` replaces the one of a classification loss. Nothing in the
training state is touched.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pipekit_train.engine import eval_batches

from ._data import to_xy
from ._private import compiled_metrics

__all__ = ["make_evaluator"]


def _accuracy(kind: str | None, y: Any, pred: Any) -> Any:
    import jax.numpy as jnp

    if kind == "cross_entropy":
        if y.shape == pred.shape and jnp.issubdtype(y.dtype, jnp.floating):
            y = jnp.argmax(y, axis=-1)
        elif y.shape == pred.shape[:-1] + (1,):
            y = y[..., 0]
        return jnp.mean(jnp.argmax(pred, axis=-1) == y)
    if kind == "binary_cross_entropy":
        p, t = pred, y
        if p.shape != t.shape:
            p, t = p.reshape(-1), t.reshape(-1)
        return jnp.mean((p > 0) == (t > 0.5))
    return None


def make_evaluator(
    model: Any,
    loss_fn: Callable[[Any, Any], Any],
    kind: str | None,
    val: Any,
    batch_size: int,
    weights: Callable[[], list[Any]] | None = None,
) -> Callable[[], dict[str, float]]:
    """``evaluate()`` → ``{"loss": …, ["accuracy": …]}`` over all of ``val``.

    ``weights()`` gives the trainable values to evaluate (the EMA averages with
    ``ema_decay``); by default the model's own.
    """
    import jax

    metrics = compiled_metrics(model)

    def batch_stats(tv: Any, ntv: Any, mv: Any, x: Any, y: Any) -> tuple[dict[str, Any], Any]:
        pred, _ = model.stateless_call(tv, ntv, x, training=False)
        out = {"loss": loss_fn(y, pred)}
        acc = _accuracy(kind, y, pred)
        if acc is not None:
            out["accuracy"] = acc
        if metrics is not None:
            mv = metrics.stateless_update_state(mv, y, pred)
        return out, mv

    compiled = jax.jit(batch_stats)

    def evaluate() -> dict[str, float]:
        tv = weights() if weights is not None else [v.value for v in model.trainable_variables]
        ntv = [v.value for v in model.non_trainable_variables]
        mv = list(metrics.stateless_reset_state()) if metrics is not None else []
        totals: dict[str, float] = {}
        rows = 0
        for batch in eval_batches(val, batch_size):
            x, y = to_xy(batch)
            n = int(np.shape(y)[0])
            stats, mv = compiled(tv, ntv, mv, x, y)
            for name, value in jax.device_get(stats).items():
                totals[name] = totals.get(name, 0.0) + float(value) * n
            rows += n
        out = {name: total / rows for name, total in totals.items()}
        if metrics is not None:
            for name, value in jax.device_get(metrics.stateless_result(mv)).items():
                out[name] = float(np.asarray(value))
        return out

    return evaluate
