"""The ``backend_options`` the flax-nnx backend takes, declared with core's ``OptionSpec``.

Importing no framework: core's preflight (``pipekit_train.engine._preflight``) imports this
module (``<package>._<module>_options`` of the entry point's ``pipekit_train_flax.backend``)
to refuse a bad option before JAX or Flax is imported, and :mod:`._options` parses against
the same tuple inside the backend, so both checks agree.
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
"""Steps fused into one compiled call by default (the equinox backend's measured default)."""

#: Every key the flax-nnx backend takes.
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "steps_per_call",
        "int",
        DEFAULT_STEPS_PER_CALL,
        "steps fused into one compiled call (lax.scan); results equal 1 bit for bit",
        low=1,
    ),
    RESUME_OPTION,
    compilation_cache_option(),
    OptionSpec("shuffle", "bool", True, "shuffle the training data each epoch"),
    OptionSpec("async_checkpointing", "bool", True, "write checkpoints in the background"),
    optimizer_id_option(),
)
