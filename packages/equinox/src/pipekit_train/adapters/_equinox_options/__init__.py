"""The Equinox backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.equinox`` (whose ``__init__`` imports jax) so that
core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's options before
the backend is imported; the adapter's ``_options`` parses against the same tuple.
"""

from __future__ import annotations

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    optimizer_id_option,
)

__all__ = ["OPTION_SPECS", "DEFAULT_STEPS_PER_CALL"]

DEFAULT_STEPS_PER_CALL = 50
"""Default fusion factor. Chosen by measurement (see docs/performance.md)."""

#: Every key the Equinox backend takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "steps_per_call",
        "int",
        DEFAULT_STEPS_PER_CALL,
        "steps fused into one compiled call (lax.scan); results equal 1 bit for bit",
        low=1,
    ),
    OptionSpec("worker_count", "int", 0, "Grain worker processes for the training data", low=0),
    RESUME_OPTION,
    compilation_cache_option(),
    OptionSpec("shuffle", "bool", True, "shuffle the training data each epoch"),
    OptionSpec("async_checkpointing", "bool", True, "write checkpoints in the background"),
    optimizer_id_option(),
)
