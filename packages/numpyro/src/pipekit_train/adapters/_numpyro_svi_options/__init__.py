"""The numpyro-svi backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.numpyro_svi`` (whose ``__init__`` imports numpyro and jax)
so that core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's options before
the backend is imported; the adapter's ``_options`` parses against the same tuple.
"""

from __future__ import annotations

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    num_data_option,
    optimizer_id_option,
)

__all__ = ["OPTION_SPECS"]

#: Every key numpyro-svi takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec("steps_per_call", "int", 50, "SVI steps fused into one compiled call", low=1),
    OptionSpec("worker_count", "int", 0, "Grain worker processes for the training data", low=0),
    OptionSpec(
        "shuffle",
        "bool",
        True,
        "shuffle the rows each epoch when minibatching; a full batch (batch_size = the "
        "dataset's rows) is never shuffled",
    ),
    RESUME_OPTION,
    OptionSpec("x64", "bool", False, "compute in float64"),
    compilation_cache_option(),
    optimizer_id_option(),
    num_data_option(),
)
