"""pipekit-train-flax: a third-party pipekit-train backend for Flax NNX modules.

``TrainingLoop(model_op=<an nnx.Module>, backend="flax-nnx", ...)`` trains through
:mod:`pipekit_train_flax.backend` (the module the ``pipekit_train.backends`` entry point
names). This package's own import is light: no JAX or Flax is imported until a name below
is used, so core's preflight can read ``pipekit_train_flax._backend_options`` before any
framework loads.

- :class:`NnxModelOp` (``._op``): the trained Operator (batched, jitted forward; ``save`` /
  ``load`` of the weights as data);
- :func:`run` (``.backend``): what ``TrainingLoop.run()`` calls.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["NnxModelOp", "run"]

_LAZY = {"NnxModelOp": "._op", "run": ".backend"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)
