"""The importance weights of a fitted guide's draws, for PSIS (``bayes._variational_health``).

Each weight is ``log p(x, z) - log q(z)`` at one draw ``z`` of the guide: the single-particle
ELBO term of ``Trace_ELBO`` (the guide traced with its parameters, the model replayed on its
draws), on the full data and the model without minibatch scaling. The draws run as one
compiled program: a ``vmap`` of them all where that fits in memory, else a ``lax.map`` in
batches, so memory stays ``batch × data`` whatever their number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["NUM_DRAWS", "guide_importance"]

#: Guide draws for PSIS: k-hat's own estimate needs a few hundred tail draws to settle.
NUM_DRAWS = 1000
_BATCH = 50
#: Draws × data elements up to which all draws run as one vmap (~80 MB of float64 data).
_VMAP_ELEMENTS = 10_000_000


def guide_importance(
    model: Any,
    guide: Any,
    params: dict[str, Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    key: Any,
    latent: Sequence[str],
    num_draws: int = NUM_DRAWS,
) -> dict[str, Any]:
    """PSIS of ``num_draws`` draws of the fitted ``guide`` (``bayes.importance_check``);
    ``{"skipped": why}`` where they cannot be weighed (a guide or model ``log_density``
    cannot trace, e.g. discrete enumerated sites) or there is nothing to weigh."""
    import jax
    import numpy as np
    from numpyro import handlers
    from numpyro.infer.util import log_density

    from pipekit_train.adapters.bayes import importance_check

    if not latent:
        return {"skipped": "the model has no latent sites"}

    def one(k: Any) -> tuple[Any, dict[str, Any]]:
        """One draw's ``log p(x, z) - log q(z)`` and its latent values."""
        log_q, guide_trace = log_density(handlers.seed(guide, k), args, kwargs, params)
        replayed = handlers.replay(handlers.seed(model, k), guide_trace)
        log_p, _ = log_density(replayed, args, kwargs, params)
        return log_p - log_q, {n: guide_trace[n]["value"] for n in latent if n in guide_trace}

    # Plain vmap where every draw's model fits in memory at once (one batched program);
    # lax.map in batches beyond, so memory stays batch × data.
    size = sum(int(np.size(a)) for a in (*args, *kwargs.values()))
    batch = None if num_draws * max(size, 1) <= _VMAP_ELEMENTS else _BATCH

    @jax.jit
    def weigh(k: Any) -> tuple[Any, dict[str, Any]]:
        keys = jax.random.split(k, num_draws)
        if batch is None:
            return jax.vmap(one)(keys)
        return jax.lax.map(one, keys, batch_size=batch)

    try:
        log_w, values = weigh(key)
        log_w, values = np.asarray(log_w), {n: np.asarray(v) for n, v in values.items()}
    except Exception as e:
        return {"skipped": f"{type(e).__name__}: {str(e)[:200]}"}
    return importance_check(log_w, values)
