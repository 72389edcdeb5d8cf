"""The driver's program for an NNX module: core's ``build_program`` over :mod:`._step`.

Fusion (``lax.scan`` over ``steps_per_call`` steps), the per-step key
``fold_in(base_key, s)``, donation and the checkpoint conversion of the carry are all
core's (:mod:`pipekit_train.jax.program`); this module adds the validation pass the
driver calls at ``eval_every_n_steps``.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np
import optax

from pipekit_train.engine import eval_batches
from pipekit_train.jax.program import Program, build_program

from ._model import ModelParts
from ._step import LossFn, initial_carry, make_evaluate, make_step

__all__ = ["nnx_program"]


def _validation(
    parts: ModelParts, loss: LossFn, accuracy: LossFn | None, val: Any, batch_size: int
) -> Any:
    """``evaluate(carry) -> {name: mean over val_dataset}`` (row-weighted batch means)."""
    evaluate = make_evaluate(parts, loss, accuracy)

    def on_val(carry: Any) -> dict[str, float]:
        totals: dict[str, float] = {}
        count = 0
        for batch in eval_batches(val, batch_size):
            n = int(np.shape(batch["x"])[0])
            out = jax.device_get(evaluate(carry, batch))
            for name, value in out.items():
                totals[name] = totals.get(name, 0.0) + float(value) * n
            count += n
        return {name: total / count for name, total in totals.items()}

    return on_val


def nnx_program(
    parts: ModelParts,
    loss: LossFn,
    accuracy: LossFn | None,
    optimizer: optax.GradientTransformation,
    *,
    base_key: jax.Array,
    val: Any,
    eval_batch_size: int,
) -> Program:
    """The compiled program training ``parts`` with ``loss`` and ``optimizer``."""
    return build_program(
        make_step(parts, loss, optimizer),
        initial_carry(parts, optimizer),
        base_key=base_key,
        evaluate=_validation(parts, loss, accuracy, val, eval_batch_size)
        if val is not None
        else None,
        donate=True,
    )
