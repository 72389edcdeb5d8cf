"""SVI as a core program: the carry is the ``SVIState``; one step is one ``svi.update``.

Chunking, ``lax.scan``, checkpointing and resume are core's; the step ignores the
driver's per-step key because NumPyro's own stream lives in ``SVIState.rng_key``.
Evaluation is the ELBO of the full model on ``val_dataset``. The live learning
rate is logged as ``lr`` when the optimiser holds it (``inject_hyperparams``: every
dict ``optimizer_config``, and a user's own optax object built that way).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax

from pipekit_train.jax.optim import current_learning_rate
from pipekit_train.jax.program import Program, build_program

__all__ = ["build_svi_program"]


def build_svi_program(
    svi: Any,
    state: Any,
    *,
    seed: int,
    val: tuple[Any, Any, dict[str, Any]] | None,
    val_elbo: Callable[[Any, Any, Any, Any], jax.Array] | None,
    keywords: tuple[str, ...] = (),
    whole: dict[str, Any] | None = None,
) -> Program:
    """The driver's program for ``svi`` from its initial ``state``; ``keywords`` are the
    batch's named arrays beyond ``x`` / ``y``, passed to the model by name. ``whole``: the
    data given by the model's own argument names, the same every step (there are no
    batches then), as ``SVI.run(key, steps, **whole)`` passes it."""

    def step(carry: Any, batch: Any, key: jax.Array) -> tuple[Any, dict[str, jax.Array]]:
        if whole is not None:
            new, loss = svi.update(carry, **whole)
        else:
            kw = {k: batch[k] for k in keywords}
            new, loss = svi.update(carry, batch["x"], batch["y"], **kw)
        metrics = {"loss": loss, "elbo": -loss}
        lr = current_learning_rate(carry.optim_state)  # an inject_hyperparams optimiser's rate
        if lr is not None:
            metrics["lr"] = lr
        return new, metrics

    evaluate = None
    if val is not None and val_elbo is not None:
        compiled = jax.jit(val_elbo)
        xv, yv, kv = val

        def evaluate(carry: Any) -> dict[str, float]:
            loss = float(compiled(carry, xv, yv, kv))
            return {"loss": loss, "elbo": -loss}

    return build_program(step, state, base_key=jax.random.PRNGKey(seed), evaluate=evaluate)
