"""``TrainingLoop.ema_decay`` on the JAX backends: an exponential moving average of weights.

The average starts at the initial parameters and is updated after every optimiser
update as ``ema = d * ema + (1 - d) * params`` (no bias correction, as Keras's
``use_ema``). It lives in the carry, so it is checkpointed and a resume continues
it bit for bit. Evaluation and the trained op use it.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.jax._deps import missing_jax_extra

try:
    import jax
except ImportError as _exc:  # pragma: no cover - exercised in a subprocess test
    raise missing_jax_extra(_exc) from _exc

__all__ = ["ema_update"]


def ema_update(ema: Any, params: Any, decay: float) -> Any:
    """One EMA step over matching pytrees of arrays, in the parameters' dtype."""
    return jax.tree_util.tree_map(
        lambda e, p: (decay * e + (1.0 - decay) * p).astype(p.dtype), ema, params
    )
