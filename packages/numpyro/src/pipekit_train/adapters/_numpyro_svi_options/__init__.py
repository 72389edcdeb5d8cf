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
    OptionSpec(
        "init",
        "choice",
        "compiled",
        "how the guide's start is set up: 'compiled' runs NumPyro's SVI.init as one compiled "
        "program (a cold run's start in well under a second); 'eager' runs it op by op as "
        "SVI.run does, so the whole run is SVI.run's to the bit (the compiled start can differ "
        "from it by 1 ulp in an autoguide's initial scale, and in a full-rank guide's order "
        "of sites)",
        choices=("compiled", "eager"),
    ),
    compilation_cache_option(),
    optimizer_id_option(),
    num_data_option(),
)
