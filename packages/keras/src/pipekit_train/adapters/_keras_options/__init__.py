"""The Keras backend's ``backend_options`` specs, importing no framework.

Kept outside ``pipekit_train.adapters.keras`` (whose ``__init__`` imports keras and jax) so that
core's preflight (``pipekit_train.engine._preflight``) checks a YAML run's options before
the backend is imported; the adapter's ``_options`` parses against the same tuple.
"""

from __future__ import annotations

from typing import Any

from pipekit_train.engine import (
    RESUME_OPTION,
    OptionSpec,
    compilation_cache_option,
    require_instances,
)

__all__ = ["OPTION_SPECS"]


def _keras_callbacks(value: Any) -> tuple[Any, ...]:
    """Every entry a ``keras.callbacks.Callback`` (pipekit's own go in ``callbacks``)."""
    if not value:
        return ()
    import keras

    return tuple(
        require_instances(
            value,
            keras.callbacks.Callback,
            key="callbacks",
            what="keras.callbacks.Callback",
            hint="pipekit callbacks go in TrainingLoop.callbacks",
        )
    )


#: Every key the keras backend takes (the reference page is written from these).
OPTION_SPECS: tuple[OptionSpec, ...] = (
    OptionSpec(
        "steps_per_execution",
        "int",
        1,
        "Keras' own: steps per call of its jitted train function (a Python loop over one "
        "step); passed to compile",
        low=1,
        what="a positive integer",
    ),
    RESUME_OPTION,
    OptionSpec("async_checkpointing", "bool", True, "Orbax writes in the background"),
    OptionSpec(
        "data_parallel",
        "bool",
        False,
        "train under keras.distribution.DataParallel over all JAX devices",
    ),
    compilation_cache_option(),
    OptionSpec(
        "callbacks",
        "list",
        (),
        "Keras callbacks run by fit beside pipekit's",
        optional=True,
        check=_keras_callbacks,
        what="a list of keras.callbacks.Callback",
    ),
)
