"""The module the ``pipekit_train.backends`` entry point ``flax-nnx`` names.

Core's registry imports it and calls :func:`run` (``run(loop) -> (trained_op,
backend_info)``); nothing else is required of a backend module. :class:`NnxModelOp` is
the Operator ``run`` returns.
"""

from ._op import NnxModelOp
from ._run import run

__all__ = ["run", "NnxModelOp"]
