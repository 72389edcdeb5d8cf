"""``backend_options={"data_parallel": True}``: ``keras.distribution.DataParallel``.

Keras lays a variable out on the device mesh when it is created under a
distribution, or, once it has a layout, when it is assigned. A model is usually
built before ``run()`` (and the optimiser is made while validating the config),
so their variables are given the distribution's layout and re-assigned.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from pipekit_train.errors import ConfigError

from ._private import set_variable_layout, variable_layout

__all__ = ["data_parallel", "relayout"]


def data_parallel(keras: Any, enabled: bool, batch_size: int) -> Any:
    """``DataParallel`` over every JAX device when ``enabled`` (``None`` otherwise)."""
    if not enabled:
        return None
    import jax

    devices = jax.devices()
    if batch_size % len(devices):
        raise ConfigError(
            f"TrainingLoop.batch_size ({batch_size}) must be divisible by the number of "
            f"devices ({len(devices)}) for backend_options.data_parallel",
            field="batch_size",
        )
    return keras.distribution.DataParallel(devices=devices)


def relayout(variables: Iterable[Any], distribution: Any) -> None:
    """Give variables made outside the distribution its layout (replicated for DataParallel)."""
    for v in variables:
        if variable_layout(v) is None:
            set_variable_layout(v, distribution.get_variable_layout(v))
            v.assign(np.asarray(v.value))
