"""The ``Operator`` protocol: what every backend's trained artifact is.

An Operator is a callable artifact that can be saved to a directory and loaded
back. ``loop.run()`` returns one as the first element of
``(trained_op, backend_info)``; ``TrainingLoop.model_op`` usually is one too
(``pipekit_train.adapters.equinox.JaxModelOp``, ``TorchModelOp``, ``KerasModelOp``,
``NumpyroPredictiveOp``).

The contract:

``op(inputs)``
    Apply the operator to a *batch* (leading axis = examples) and return the
    batch of outputs, in the operator's array type.
``op.save(path)``
    Write the artifact to the directory ``path`` (created if needed).
``OpClass.load(path, ...)``
    Rebuild it. Loading must not unpickle code the user did not ask for:
    weights are stored as plain arrays, and the structure comes from the user —
    an argument to ``load`` or an import string (``"pkg.module:factory"``) that
    they recorded at save time. Implementations may take extra keyword
    arguments (``JaxModelOp.load(path, like=...)``).

The protocol is ``runtime_checkable``: ``isinstance(x, Operator)`` checks that
the three attributes exist (not their signatures).

The trust rules every operator's ``load`` follows are public here, for backends outside this
repository: :func:`check_trust` (the ``trusted=`` argument: ``True`` or module prefixes),
:func:`check_factory_record` (what an operator may record to rebuild its structure),
:func:`resolve_recorded` (import a recorded ``"pkg.module:factory"`` only when trusted, else
``UntrustedCodeError``), :func:`build_from_factory` (call a factory with the recorded
keyword arguments) and :func:`is_import_string`. The contract kit checks them
(``pipekit_train.testing``: ``operator_saves_and_loads_without_importing_recorded_code``).
"""

from __future__ import annotations

import os
from typing import Any, Protocol, runtime_checkable

from ._factory_record import check_factory_record
from ._refs import is_import_string, resolve_import_string
from ._trust import Trust, build_from_factory, check_trust, is_trusted, resolve_recorded

__all__ = [
    "Operator",
    "Trust",
    "build_from_factory",
    "check_factory_record",
    "check_trust",
    "is_import_string",
    "resolve_import_string",
    "is_trusted",
    "resolve_recorded",
]


@runtime_checkable
class Operator(Protocol):
    """A callable, saveable, loadable trained artifact (see the module docstring)."""

    def __call__(self, inputs: Any) -> Any:
        """Apply the operator to a batch of inputs."""
        ...

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the artifact to the directory ``path``."""
        ...

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Operator:
        """Rebuild an artifact written by :meth:`save`."""
        ...
