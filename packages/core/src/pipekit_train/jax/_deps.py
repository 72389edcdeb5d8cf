"""Friendly errors for the optional dependencies of core's ``[jax]`` extra.

Modules under ``pipekit_train.jax`` import jax and optax at module level and turn an
``ImportError`` into :func:`missing_jax_extra`, so a JAX-free install gets one clear
:class:`~pipekit_train.errors.BackendNotInstalledError` with the ``pip install``
command instead of a bare ``ModuleNotFoundError``. Equinox is not part of the
extra: it belongs to ``pipekit-train-equinox``, with ``JaxModelOp``.
"""

from __future__ import annotations

from pipekit_train.errors import BackendNotInstalledError

JAX_EXTRA_INSTALL = "pip install 'pipekit-train-core[jax]'"


def missing_jax_extra(exc: ImportError) -> BackendNotInstalledError:
    """The error to raise when importing jax/optax for a ``pipekit_train.jax`` module fails."""
    missing = getattr(exc, "name", None) or str(exc)
    return BackendNotInstalledError(
        f"pipekit_train.jax needs {missing!r}, which is not installed "
        f"({type(exc).__name__}: {exc}). Install core's JAX extra: {JAX_EXTRA_INSTALL}"
    )
