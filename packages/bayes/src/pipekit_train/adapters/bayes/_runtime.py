"""What every Bayesian backend's ``run`` does around the sampler: precision, ignored fields."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from pipekit_train.errors import ConfigError, warn_user

__all__ = ["precision", "warn_unused_fields"]


@contextlib.contextmanager
def precision(x64: bool, field: str = "backend_options.x64") -> Iterator[None]:
    """Run the block in float64 when ``x64`` (``jax.enable_x64``), before any array is made.

    Raises ``ConfigError`` naming ``field`` if the platform cannot hold float64.
    """
    if not x64:
        yield
        return
    import jax
    import jax.numpy as jnp
    import numpy as np

    with jax.enable_x64(True):
        try:
            # A transfer, not a computation: nothing compiles before the run's own checks
            # (an eager `zeros + 1.0` compiled two programs before every validation error).
            probe = jax.device_put(np.zeros((), dtype=np.float64))
            ok = probe.dtype == jnp.float64
        except Exception as exc:  # noqa: BLE001 - the platform refused float64
            raise ConfigError(
                f"{field}: this JAX platform ({jax.default_backend()}) cannot compute in "
                f"float64 ({type(exc).__name__}: {exc}); drop x64 or run on CPU/GPU",
                field=field,
            ) from exc
        if not ok:
            raise ConfigError(
                f"{field}: float64 is not available on {jax.default_backend()}; drop x64",
                field=field,
            )
        yield


def warn_unused_fields(loop: Any, backend: str, names: Sequence[str]) -> list[str]:
    """Warn once, naming every field in ``names`` the user set but ``backend`` ignores."""
    from pipekit_train.loop import TrainingLoop

    defaults = {f.name: f for f in TrainingLoop.__dataclass_fields__.values()}
    set_fields = []
    for name in names:
        f = defaults[name]
        default = f.default_factory() if callable(f.default_factory) else f.default
        if getattr(loop, name) != default:
            set_fields.append(name)
    if set_fields:
        names = [f"TrainingLoop.{name}" for name in set_fields]
        shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        warn_user(
            f"{backend} ignores {shown}: a sampler runs NumpyroTask.num_warmup + num_samples "
            "steps over the whole dataset, with no optimiser."
        )
    return set_fields
