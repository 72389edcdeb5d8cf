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
from pipekit_train.registry import supported

__all__ = ["import_keras"]

_log = logging.getLogger("pipekit_train.adapters.keras")
_FIX = (
    "set the environment variable KERAS_BACKEND=jax before anything imports keras "
    "(e.g. `export KERAS_BACKEND=jax`, or os.environ['KERAS_BACKEND'] = 'jax' at the top "
    "of your script)"
)


# The modules of Keras' other backends: missing one of these is a KERAS_BACKEND problem.
_OTHER_BACKENDS = ("tensorflow", "torch", "openvino")


def _import_failure(exc: ImportError) -> BackendNotInstalledError | ConfigError:
    """The error for a failed ``import keras``, naming its real cause.

    Keras itself missing, or a module Keras needs (``packaging``, ``ml_dtypes``, …) missing,
    is an install problem (``BackendNotInstalledError`` with the module's name); only a missing
    module of another Keras backend means Keras is configured for that backend.
    """
    missing = getattr(exc, "name", None) or ""
    top = missing.split(".")[0]
    if top == "keras":
        return BackendNotInstalledError(
            "the keras backend needs Keras 3: pip install pipekit-train-keras"
        )
    if top in _OTHER_BACKENDS:
        return ConfigError(
            f"importing Keras failed ({exc}): Keras is configured for its {top!r} backend, "
            f"which is not installed; {_FIX}",
            field="backend",
        )
    if missing:
        return BackendNotInstalledError(
            f"importing Keras failed: the module {missing!r}, which Keras needs, is not "
            f"installed ({type(exc).__name__}: {exc}). Install it (pip install {top}), or "
            f"reinstall Keras with its dependencies: pip install --force-reinstall "
            f"'{supported('pipekit-train-keras', 'keras')}'"
        )
    return BackendNotInstalledError(
        f"importing Keras failed ({type(exc).__name__}: {exc}); reinstall it: pip install "
        f"--force-reinstall '{supported('pipekit-train-keras', 'keras')}'"
    )


def import_keras() -> ModuleType:
    """Import Keras on its JAX backend and return the module.

    Raises ``ConfigError`` with the fix when ``KERAS_BACKEND`` names another backend
    or Keras was already imported on one, and ``BackendNotInstalledError`` when Keras,
    or a module Keras needs, is missing (:func:`_import_failure`).
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
        raise _import_failure(exc) from exc
    actual = keras.backend.backend()
    if actual != "jax":
        raise ConfigError(
            f"Keras was already imported on the {actual!r} backend; the keras backend of "
            f"pipekit-train runs Keras on JAX only; {_FIX}, in a fresh process",
            field="backend",
        )
    return keras
