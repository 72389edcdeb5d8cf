"""Select Keras' JAX backend before Keras is first imported.

Keras picks its backend once, at its first import, from ``KERAS_BACKEND`` or else
from ``~/.keras/keras.json`` — a file Keras itself writes, naming TensorFlow, on
its first import. Only ``KERAS_BACKEND`` set before that import is reliable, so
this module sets it to ``jax`` when it is unset (saying so once) and refuses a
Keras that was already imported on another backend. TensorFlow is never needed.
"""

from __future__ import annotations

import logging
import os
import sys
from types import ModuleType

from pipekit_train.errors import BackendNotInstalledError, ConfigError

__all__ = ["import_keras"]

_log = logging.getLogger("pipekit_train.adapters.keras")
_FIX = (
    "set the environment variable KERAS_BACKEND=jax before anything imports keras "
    "(e.g. `export KERAS_BACKEND=jax`, or os.environ['KERAS_BACKEND'] = 'jax' at the top "
    "of your script)"
)


def import_keras() -> ModuleType:
    """Import Keras on its JAX backend and return the module.

    Raises ``ConfigError`` with the fix when ``KERAS_BACKEND`` names another backend
    or Keras was already imported on one, and ``BackendNotInstalledError`` when Keras
    is missing.
    """
    if "keras" not in sys.modules:
        chosen = os.environ.get("KERAS_BACKEND")
        if chosen is None:
            os.environ["KERAS_BACKEND"] = "jax"
            _log.warning(
                "pipekit-train-keras: KERAS_BACKEND was unset; set it to 'jax' before "
                "importing Keras (the keras backend trains on JAX, without TensorFlow)"
            )
        elif chosen != "jax":
            raise ConfigError(
                f"KERAS_BACKEND={chosen!r}: the keras backend of pipekit-train runs Keras on "
                f"JAX only; {_FIX}",
                field="backend",
            )
    try:
        import keras
    except ImportError as exc:
        if getattr(exc, "name", None) == "keras":
            raise BackendNotInstalledError(
                "the keras backend needs Keras 3: pip install pipekit-train-keras"
            ) from exc
        raise ConfigError(
            f"importing Keras failed ({exc}); Keras is configured for a backend that is not "
            f"installed; {_FIX}",
            field="backend",
        ) from exc
    actual = keras.backend.backend()
    if actual != "jax":
        raise ConfigError(
            f"Keras was already imported on the {actual!r} backend; the keras backend of "
            f"pipekit-train runs Keras on JAX only; {_FIX}, in a fresh process",
            field="backend",
        )
    return keras
