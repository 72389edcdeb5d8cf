"""``backend_info`` of a JAX backend: the engine's run report with JAX's devices filled in.

Every JAX backend (equinox, numpyro-svi, numpyro-mcmc, blackjax, keras) reports the same
devices (``jax.devices()``), process count and metadata versions; this is the one place
that says so, on top of :func:`pipekit_train.engine.backend_info`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pipekit_train.engine import RunOutcome, backend_info
from pipekit_train.registry import distribution_versions

__all__ = ["jax_backend_info"]


def jax_backend_info(
    backend: str,
    distribution: str,
    outcome: RunOutcome,
    *,
    started: float,
    diagnostics: Mapping[str, Any] | None = None,
    warnings: Sequence[str] = (),
    extras: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The run report of ``backend`` (from ``distribution``) on this JAX process."""
    import jax

    return backend_info(
        backend,
        outcome,
        versions=distribution_versions(distribution),
        started=started,
        devices=[str(d) for d in jax.devices()],
        process_count=jax.process_count(),
        diagnostics=diagnostics,
        warnings=warnings,
        extras=extras,
    )
