"""The ``keras`` backend: Keras 3 ``compile`` + ``fit`` on JAX, without TensorFlow.

Importing this module selects Keras' JAX backend (``KERAS_BACKEND=jax``) when none
is set. ``TrainingLoop(backend="keras")`` takes a ``keras.Model`` (bare or as a
``KerasModelOp``), runs exactly ``max_steps`` steps over core's deterministic batch
order, drives pipekit callbacks, evaluates and checkpoints at exact steps, and
resumes bit-identically from ``checkpoint_dir``. See ``packages/keras/README.md``.
"""

from ._env import import_keras as _import_keras

_import_keras()

from . import _private  # noqa: E402, F401  (checks the Keras internals the backend uses)
from ._losses import KerasTask  # noqa: E402
from ._op import KerasModelOp  # noqa: E402
from ._optim import KERAS_OPTIMIZERS  # noqa: E402
from ._run import run  # noqa: E402

__all__ = ["KerasModelOp", "KerasTask", "KERAS_OPTIMIZERS", "run"]
